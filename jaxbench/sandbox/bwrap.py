"""Bubblewrap: whether it is here and what it supports, and the command line that builds a
child's minimal root filesystem (read-only system libraries, the interpreter, an allowlist of
packages, the child script; private /tmp and /dev/shm; the inputs and a fresh work dir)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import TypedDict, cast

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


class BwrapInfo(TypedDict):
    """The bubblewrap found here (:func:`bwrap_info`)."""

    path: str
    version: str
    flags: list[str]  # those of the flags this module uses that it supports


@functools.lru_cache(maxsize=1)
def bwrap_info() -> BwrapInfo | None:
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


# NVIDIA nodes every CUDA process opens besides its GPUs' own /dev/nvidiaN: the control device,
# unified memory (and its tools node, which CUPTI, hence the profiler, opens), and the MIG
# capability directory
NVIDIA_SHARED_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps")


def _gpu_minors_by_index(root: str) -> list[int] | None:
    """The device minor (the N of /dev/nvidiaN) of each GPU in PCI bus order, which is the
    order of CUDA's indices under ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (set for GPU children) and of
    nvidia-smi's; None where the driver's /proc files are not there to say."""
    base = os.path.join(root, "proc", "driver", "nvidia", "gpus")
    try:
        buses = sorted(os.listdir(base))
    except OSError:
        return None
    minors = []
    for bus in buses:
        try:
            with open(os.path.join(base, bus, "information"), encoding="ascii", errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        found = [ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Device Minor:")]
        if not found or not found[0].isdigit():
            return None
        minors.append(int(found[0]))
    return minors


def nvidia_device_nodes(root: str = "/", visible: str | None = None) -> list[str]:
    """The NVIDIA device nodes under ``root``/dev that a GPU child gets, as paths inside the
    sandbox (``/dev/nvidia0``, ``/dev/nvidiactl``, ...): the shared nodes that exist and the GPUs
    that ``visible`` (``CUDA_VISIBLE_DEVICES``) selects, every GPU when it is unset or names
    GPUs by UUID or MIG instance (which this cannot map to nodes). A consumer that sees one GPU
    cannot open another's node: the chip split is enforced, not only requested."""
    dev = os.path.join(root, "dev")
    try:
        names = set(os.listdir(dev))
    except OSError:
        return []
    gpus = sorted((n for n in names if n.startswith("nvidia") and n[6:].isdigit()), key=lambda n: int(n[6:]))
    wanted = [p.strip() for p in (visible or "").split(",") if p.strip()]
    if wanted and all(w.isdigit() for w in wanted):
        minors = _gpu_minors_by_index(root)
        chosen = set()
        for w in wanted:
            i = int(w)
            if minors is None:
                chosen.add(f"nvidia{i}")  # no driver table: index and minor coincide on a plain host
            elif i < len(minors):
                chosen.add(f"nvidia{minors[i]}")
        gpus = [g for g in gpus if g in chosen]
    return [f"/dev/{n}" for n in (*gpus, *(n for n in NVIDIA_SHARED_NODES if n in names))]


def device_nodes(platform: str, root: str = "/", environ: Mapping[str, str] | None = None) -> list[str]:
    """The device nodes a child on ``platform`` gets (paths inside the sandbox); none on cpu."""
    env = os.environ if environ is None else environ
    try:
        names = sorted(os.listdir(os.path.join(root, "dev")))
    except OSError:
        names = []
    if platform == "tpu":
        return [f"/dev/{n}" for n in names if n.startswith(("accel", "vfio"))]
    if platform == "gpu":
        nodes = nvidia_device_nodes(root, env.get("CUDA_VISIBLE_DEVICES"))
        if not nodes:  # no NVIDIA driver here: a ROCm host's compute and render nodes
            nodes = [f"/dev/{n}" for n in names if n in ("kfd", "dri")]
        return nodes
    return []


def accelerator_binds(nodes: list[str]) -> list[str]:
    """bubblewrap arguments giving the child ``nodes`` (device nodes as they are, so that the
    driver's permissions still apply) and /sys read-only (the drivers read their topology)."""
    args = []
    for n in nodes:
        args += ["--dev-bind-try", n, n]
    args += ["--ro-bind-try", "/sys", "/sys"]
    return args


def bwrap_argv(
    env: Mapping[str, str],
    stage: Callable[[str], str],
    *,
    prefix: str,
    site: str | list[str],
    pybin: str,
    child_file: str,
    in_dir: str,
    work_dir: str,
    tmp_bytes: int,
    platform: str,
    fake_device: str | None = None,
    nodes: list[str] | None = None,
) -> list[str]:
    """The bubblewrap command line that runs ``child_file`` with ``env`` as the child uid;
    ``stage(path)`` gives the host path to bind for ``path`` (see :class:`host.Stager`);
    ``nodes``: the device nodes to bind (:func:`device_nodes` when None); ``site``: the
    directories the child imports from (``host.site_dirs``), their allowed entries bound into one
    ``/site``, the first directory's where two hold the same name."""
    # never None here: a bwrap mode is chosen (or forced, probe.best_mode) only where bwrap exists
    info = cast("BwrapInfo", bwrap_info())
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
    bound: set[str] = set()
    for d in [site] if isinstance(site, str) else site:
        for entry in site_entries(d):
            if entry not in bound:
                bound.add(entry)
                argv += ["--ro-bind", stage(os.path.join(d, entry)), f"/site/{entry}"]
    argv += ["--ro-bind", stage(child_file), CHILD_PATH]
    argv += ["--ro-bind", in_dir, "/in", "--bind", work_dir, "/work", "--proc", "/proc", "--dev", "/dev"]
    if "--size" in flags:
        argv += ["--size", str(tmp_bytes)]
    argv += ["--tmpfs", "/tmp"]
    if "--size" in flags:
        argv += ["--size", str(min(tmp_bytes, 256 << 20))]
    argv += ["--tmpfs", "/dev/shm"]
    if platform != "cpu":
        argv += accelerator_binds(device_nodes(platform) if nodes is None else nodes)
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
