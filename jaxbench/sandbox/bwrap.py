"""Bubblewrap: whether it is here and what it supports, and the command line that builds a
child's minimal root filesystem (read-only system libraries, the interpreter, an allowlist of
packages, the child script; private /tmp and /dev/shm; the inputs and a fresh work dir)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from typing import Any, cast

from .device import SIM_MOUNT

INSIDE_UID = 65534  # the uid the child sees ("nobody")
CHILD_PATH = "/harness/sandbox_child.py"  # where the child script is mounted inside

# top-level entries of site-packages the child may import (and their .dist-info)
SITE_ALLOWLIST = (
    "jax",
    "jaxlib",
    "jax_plugins",
    "ml_dtypes",
    "numpy",
    "numpy.libs",
    "opt_einsum",
    "scipy",
    "scipy.libs",
    "absl",
    "etils",
    "filelock",
    "typing_extensions.py",
    "pygments",
    "libtpu",
    "libtpu_nightly",
    "nvidia",
    "jax_cuda12_plugin",
    "jax_cuda12_pjrt",
    "jax_cuda13_plugin",
    "jax_cuda13_pjrt",
    "jax_rocm60_plugin",
    "jax_rocm60_pjrt",
    # Tokamax (expert kernels may import it) and what it imports
    "tokamax",
    "einshape",
    "immutabledict",
    "jaxtyping",
    "wadler_lindig",
    "typeguard",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_inspection",
    "qwix",
    "flax",
    "optax",
    "msgpack",
    "treescope",
    "rich",
    "markdown_it",
    "mdurl",
    "yaml",
    "_yaml",
    "tqdm",
    "orbax",
    "_distutils_hack",
    # jax.export deserialization: the baseline reaches its child as a serialized program
    "flatbuffers",
)


@functools.lru_cache(maxsize=1)
def bwrap_info() -> dict | None:
    path = shutil.which("bwrap")
    if not path:
        return None
    try:
        ver = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
        helptext = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    text = helptext.stdout + helptext.stderr
    flags = {
        f
        for f in (
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--size",
            "--unshare-all",
            "--cap-drop",
            "--clearenv",
            "--hostname",
            "--unshare-cgroup-try",
        )
        if f in text
    }
    return {"path": path, "version": (ver.stdout or ver.stderr).strip(), "flags": sorted(flags)}


def site_entries(site: str) -> list[str]:
    names = set(os.listdir(site))
    out = []
    for entry in SITE_ALLOWLIST:
        if entry in names:
            out.append(entry)
        base = entry.split(".")[0].replace("-", "_")
        out.extend(
            n for n in names if n.endswith(".dist-info") and n.split("-")[0].lower().replace("-", "_") == base.lower()
        )
    return sorted(set(out))


def accelerator_binds(platform: str) -> list[str]:
    args = []
    devs = []
    try:
        names = os.listdir("/dev")
    except OSError:
        names = []
    if platform == "tpu":
        devs = [n for n in names if n.startswith(("accel", "vfio"))]
    elif platform == "gpu":
        devs = [n for n in names if n.startswith(("nvidia", "dri", "kfd"))]
    for n in sorted(devs):
        args += ["--dev-bind-try", f"/dev/{n}", f"/dev/{n}"]
    args += ["--ro-bind-try", "/sys", "/sys"]
    return args


def bwrap_argv(
    env: dict,
    stage,
    *,
    prefix: str,
    site: str,
    pybin: str,
    child_file: str,
    in_dir: str,
    work_dir: str,
    tmp_bytes: int,
    platform: str,
    fake_device: str | None = None,
) -> list[str]:
    """The bubblewrap command line that runs ``child_file`` with ``env`` as the child uid;
    ``stage(path)`` gives the host path to bind for ``path`` (see :class:`host.Stager`)."""
    # never None here: a bwrap mode is chosen (or forced, probe.best_mode) only where bwrap exists
    info = cast("dict[str, Any]", bwrap_info())
    flags = set(info["flags"])
    argv = [info["path"], "--unshare-all", "--unshare-user"]
    if "--disable-userns" in flags:
        argv.append("--disable-userns")
    argv += [
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        str(INSIDE_UID),
        "--gid",
        str(INSIDE_UID),
        "--hostname",
        "jaxbench",
        "--clearenv",
    ]
    for k, v in sorted(env.items()):
        argv += ["--setenv", k, v]
    # system libraries (mirroring merged-/usr symlinks)
    for top in ("/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", stage(top), top]
    for d in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32"):
        if os.path.isdir(d) and not os.path.islink(d):
            argv += ["--ro-bind", stage(d), d]
    if os.path.exists("/etc/ld.so.cache"):
        argv += ["--ro-bind", stage("/etc/ld.so.cache"), "/etc/ld.so.cache"]
    argv += ["--ro-bind", stage(prefix), prefix]
    base_site = os.path.join(prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages")
    if os.path.isdir(base_site):
        argv += ["--tmpfs", base_site]  # hide the base interpreter's packages
    for entry in site_entries(site):
        argv += ["--ro-bind", stage(os.path.join(site, entry)), f"/site/{entry}"]
    argv += ["--ro-bind", stage(child_file), CHILD_PATH]
    argv += ["--ro-bind", in_dir, "/in", "--bind", work_dir, "/work", "--proc", "/proc", "--dev", "/dev"]
    if "--size" in flags:
        argv += ["--size", str(tmp_bytes)]
    argv += ["--tmpfs", "/tmp"]
    if "--size" in flags:
        argv += ["--size", str(min(tmp_bytes, 256 << 20))]
    argv += ["--tmpfs", "/dev/shm"]
    if platform != "cpu":
        argv += accelerator_binds(platform)
    if fake_device:  # the simulated exclusive device of the tests (sandbox/device.py)
        argv += ["--bind", fake_device, SIM_MOUNT]
    # the root (bubblewrap's own tmpfs) read-only: only /work, /tmp and /dev/shm take writes
    argv += ["--remount-ro", "/"]
    argv += [
        "--chdir",
        "/work",
        "--",
        pybin,
        "-I",
        "-S",
        "-B",
        CHILD_PATH,
        "--in",
        "/in",
        "--work",
        "/work",
        "--site",
        "/site",
    ]
    return argv
