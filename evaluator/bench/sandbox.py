"""The sandbox: one fresh, isolated child process per candidate (trusted side).

Layers, strongest first; each is probed on this machine and every record lists exactly the
layers that were active (:func:`available_protections` reports what this machine offers):

* bubblewrap: new user, PID, network, IPC, UTS, cgroup and mount namespaces
  (``--unshare-all --unshare-user``), ``--disable-userns`` (no nested user namespaces),
  ``--die-with-parent``, ``--new-session``, ``--cap-drop ALL``, ``--clearenv``; a root
  filesystem holding only read-only binds of the system libraries, the interpreter and its
  standard library, an allowlist of the virtual environment's packages (jax, jaxlib, numpy,
  ml_dtypes, ...; not Django, not database or broker clients) and the child module file, plus
  private tmpfs ``/tmp`` and ``/dev/shm``, the inputs (read-only) and a fresh work dir.
* an unprivileged host uid (a fresh one per child when the worker is root), no supplementary
  groups, ``no_new_privs``, ``oom_score_adj`` 1000.
* a cgroup per child (v2, or the v1 ``pids`` and ``memory`` hierarchies): ``pids.max`` and a
  memory limit (``RLIMIT_NPROC`` does not apply to root); killed as a whole at the end.
* rlimits: CPU seconds, file size, open files, core dumps off, address space, processes.
* a size-limited tmpfs work dir in a private mount namespace (a candidate cannot fill the
  host's disk; nothing is left mounted afterwards).
* a wall-clock timeout per phase that kills the whole process group; stdout and stderr are
  drained and capped.

Where bubblewrap or cgroups are unavailable the child still runs with what remains (cleared
environment, fresh work dir, rlimits, new session, and the network/IPC/UTS namespaces the
launcher can still create) and the record says so.
"""
from __future__ import annotations

import atexit
import dataclasses
import errno
import functools
import importlib.util
import json
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD_FILE = os.path.join(HERE, "sandbox_child.py")
LAUNCH_FILE = os.path.join(HERE, "sandbox_launch.py")
BENCH_DIR = HERE

SANDBOX_UID_BASE = 1_509_949_440      # fresh host uid per child: BASE + random 20 bits
INSIDE_UID = 65534                    # the uid the child sees ("nobody")

# top-level entries of site-packages the child may import (and their .dist-info)
SITE_ALLOWLIST = (
    "jax", "jaxlib", "jax_plugins", "ml_dtypes", "numpy", "numpy.libs", "opt_einsum", "scipy",
    "scipy.libs", "absl", "etils", "filelock", "typing_extensions.py", "pygments",
    "libtpu", "libtpu_nightly", "nvidia", "jax_cuda12_plugin", "jax_cuda12_pjrt",
    "jax_cuda13_plugin", "jax_cuda13_pjrt", "jax_rocm60_plugin", "jax_rocm60_pjrt",
    # Tokamax (expert kernels may import it) and what it imports
    "tokamax", "einshape", "immutabledict", "jaxtyping", "wadler_lindig", "typeguard", "pydantic",
    "pydantic_core", "annotated_types", "typing_inspection", "qwix", "flax", "optax", "msgpack",
    "treescope", "rich", "markdown_it", "mdurl", "yaml", "_yaml", "tqdm", "orbax", "_distutils_hack",
    # jax.export deserialization: the baseline reaches its child as a serialized program
    "flatbuffers",
)
# environment passed to accelerator children (hardware configuration, never credentials)
ACCEL_ENV_PREFIXES = ("TPU_", "LIBTPU_", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                      "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
ACCEL_ENV_DENY = ("TOKEN", "SECRET", "KEY", "PASSWORD", "CREDENTIAL")


class SandboxError(RuntimeError):
    """The sandbox itself failed (an infrastructure problem, not the candidate's)."""


class PhaseTimeout(Exception):
    pass


class ChildGone(Exception):
    """The child exited or closed its status channel."""


@dataclasses.dataclass
class Limits:
    memory_bytes: int = 4 << 30
    pids: int = 512
    cpu_seconds: int = 1800
    file_bytes: int = 1 << 30
    open_files: int = 1024
    nproc: int = 1024
    address_space_bytes: int | None = None   # None: derived (no limit on accelerators)
    tmp_bytes: int = 256 << 20
    work_bytes: int = 2 << 30
    output_cap: int = 64 << 10               # kept per stream (stdout, stderr)
    cpus: list | None = None                 # CPU affinity; None: default_cpus(platform)


def default_cpus(platform: str) -> list | None:
    """The CPUs a child runs on. On the ``cpu`` target every child (baseline and candidate)
    is confined to ONE core once JAX is initialised (see ``SandboxedChild._pin``): cross-core
    hand-offs between the dispatching thread and XLA's worker threads dominate sub-millisecond
    kernels and make unpinned timings several times slower and far noisier. ``JAXBENCH_CPU_CORES`` ("3" or "2,3") chooses; the default is the
    last core this process may use. Accelerator children are not pinned."""
    if platform != "cpu":
        return None
    env = os.environ.get("JAXBENCH_CPU_CORES", "").strip()
    if env:
        if env.lower() in ("all", "none"):
            return None
        return sorted({int(x) for x in env.replace(" ", "").split(",") if x})
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    return ["auto"] if len(allowed) > 1 else None


def _cpu_times() -> dict:
    """Per-core (busy, total) jiffies from /proc/stat."""
    out = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu") and line[3:4].isdigit():
                    parts = line.split()
                    vals = [int(x) for x in parts[1:]]
                    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
                    out[int(parts[0][3:])] = (sum(vals) - idle, sum(vals))
    except (OSError, ValueError):
        pass
    return out


def least_busy_core(before: dict, after: dict, allowed) -> int | None:
    """The allowed core that was least busy between two /proc/stat snapshots (ties: the
    highest-numbered core, away from the interrupt-heavy core 0)."""
    best = None
    for c in sorted(allowed):
        if c in before and c in after:
            db, dt = after[c][0] - before[c][0], after[c][1] - before[c][1]
            frac = db / dt if dt > 0 else 1.0
            if best is None or frac <= best[0]:
                best = (frac, c)
    return best[1] if best else None


# --------------------------------------------------------------------------- the machine

def _python_prefix() -> str:
    return sys.base_prefix


def _python_binary() -> str:
    exe = os.path.realpath(sys.executable)
    if not exe.startswith(_python_prefix().rstrip("/") + "/"):
        # a venv python that is not a symlink into the base prefix
        ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        exe = os.path.join(_python_prefix(), "bin", ver)
    return exe


def _site_packages() -> str:
    spec = importlib.util.find_spec("jax")
    if spec is None or not spec.origin:
        raise SandboxError("jax is not installed")
    return os.path.dirname(os.path.dirname(spec.origin))


def _site_entries(site: str) -> list[str]:
    names = set(os.listdir(site))
    out = []
    for entry in SITE_ALLOWLIST:
        if entry in names:
            out.append(entry)
        base = entry.split(".")[0].replace("-", "_")
        out.extend(n for n in names if n.endswith(".dist-info") and
                   n.split("-")[0].lower().replace("-", "_") == base.lower())
    return sorted(set(out))


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
    flags = {f for f in ("--disable-userns", "--die-with-parent", "--new-session", "--size",
                         "--unshare-all", "--cap-drop", "--clearenv", "--hostname",
                         "--unshare-cgroup-try") if f in text}
    return {"path": path, "version": (ver.stdout or ver.stderr).strip(), "flags": sorted(flags)}


def _mounts() -> list[tuple[str, str, str]]:
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                parts, rparts = left.split(), right.split()
                if len(parts) >= 5 and len(rparts) >= 3:
                    out.append((parts[4], rparts[0], rparts[2]))   # mountpoint, fstype, opts
    except OSError:
        pass
    return out


@functools.lru_cache(maxsize=1)
def cgroup_info() -> dict | None:
    """Where per-child cgroups can be created: v2 with the pids and memory controllers, or the
    v1 ``pids`` and ``memory`` hierarchies; None where neither is writable."""
    if os.geteuid() != 0:
        return None
    own = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                for c in (ctrls.split(",") if ctrls else [""]):
                    own[c] = path
    except OSError:
        return None
    mounts = _mounts()
    # v2
    for mp, fstype, _opts in mounts:
        if fstype != "cgroup2":
            continue
        try:
            ctrls = open(os.path.join(mp, "cgroup.controllers")).read().split()
        except OSError:
            continue
        if "pids" in ctrls and "memory" in ctrls:
            want = "+pids +memory" + (" +cpuset" if "cpuset" in ctrls else "")
            for parent in (os.path.join(mp, own.get("", "/").lstrip("/")), mp):
                base = os.path.join(parent, "jaxbench")
                try:
                    os.makedirs(base, exist_ok=True)
                    with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                        f.write(want)
                    with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                        f.write(want)
                    bases = {"pids": base, "memory": base}
                    if "cpuset" in ctrls:
                        bases["cpuset"] = base
                    return {"version": "v2", "bases": bases}
                except OSError:
                    continue
    # v1
    bases = {}
    for ctrl in ("pids", "memory", "cpuset"):
        for mp, fstype, opts in mounts:
            if fstype == "cgroup" and ctrl in opts.split(","):
                base = os.path.join(mp, own.get(ctrl, "/").lstrip("/"), "jaxbench")
                try:
                    os.makedirs(base, exist_ok=True)
                    if ctrl == "cpuset":   # a v1 cpuset must have cpus and mems before use
                        for f in ("cpuset.cpus", "cpuset.mems"):
                            with open(os.path.join(os.path.dirname(base), f)) as src:
                                val = src.read().strip()
                            if not open(os.path.join(base, f)).read().strip():
                                _write(base, f, val)
                    probe = os.path.join(base, "probe-" + secrets.token_hex(4))
                    os.mkdir(probe)
                    os.rmdir(probe)
                    bases[ctrl] = base
                except OSError:
                    pass
                break
    if "pids" in bases or "memory" in bases:
        return {"version": "v1", "bases": bases}
    return None


class Cgroup:
    """A per-child cgroup (v2 directory, or one directory per v1 hierarchy)."""

    def __init__(self, info: dict, name: str, memory_bytes: int, pids: int):
        self.version = info["version"]
        self.dirs: dict[str, str] = {}
        self.active: dict[str, bool] = {"pids": False, "memory": False}
        if self.version == "v2":
            d = os.path.join(info["bases"]["pids"], name)
            os.mkdir(d)
            self.dirs = {"pids": d, "memory": d}
            self.active["pids"] = _write(d, "pids.max", str(pids))
            self.active["memory"] = _write(d, "memory.max", str(memory_bytes))
            _write(d, "memory.swap.max", "0")
            _write(d, "memory.oom.group", "1")
            if "cpuset" in info["bases"]:
                self.dirs["cpuset"] = d
        else:
            for ctrl, base in info["bases"].items():
                d = os.path.join(base, name)
                os.mkdir(d)
                self.dirs[ctrl] = d
            if "cpuset" in self.dirs:       # start with the parent's CPUs and memory nodes
                for f in ("cpuset.cpus", "cpuset.mems"):
                    try:
                        with open(os.path.join(info["bases"]["cpuset"], f)) as src:
                            _write(self.dirs["cpuset"], f, src.read().strip())
                    except OSError:
                        pass
            if "pids" in self.dirs:
                self.active["pids"] = _write(self.dirs["pids"], "pids.max", str(pids))
            if "memory" in self.dirs:
                md = self.dirs["memory"]
                self.active["memory"] = _write(md, "memory.limit_in_bytes", str(memory_bytes))
                _write(md, "memory.memsw.limit_in_bytes", str(memory_bytes))
                _write(md, "memory.swappiness", "0")

    @property
    def procs_files(self) -> list[str]:
        return sorted({os.path.join(d, "cgroup.procs") for c, d in self.dirs.items()
                       if c != "cpuset"})

    def restrict_cpus(self, cpus: list[int], pids: list[int]) -> bool:
        """Confine ``pids`` (all their threads) to ``cpus`` with the cpuset controller: the
        processes cannot widen it again (sched_setaffinity stays inside the cpuset)."""
        d = self.dirs.get("cpuset")
        if not d:
            return False
        if not _write(d, "cpuset.cpus", ",".join(str(c) for c in cpus)):
            return False
        if self.version == "v2":
            return True                   # the processes are already in this cgroup
        ok = True
        for pid in pids:
            ok = _write(d, "cgroup.procs", str(pid)) and ok
        return ok

    def pids(self) -> list[int]:
        out = set()
        for c, d in self.dirs.items():
            if c == "cpuset" and self.version == "v1" and len(self.dirs) > 1:
                continue
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    out.update(int(x) for x in f.read().split())
            except OSError:
                pass
        return sorted(out)

    def kill_all(self, deadline_s: float = 3.0):
        if self.version == "v2":
            _write(self.dirs["pids"], "cgroup.kill", "1")
        elif "pids" in self.dirs:
            _write(self.dirs["pids"], "pids.max", "0")    # no new forks while killing
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            pids = self.pids()
            if not pids:
                return True
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        return not self.pids()

    def oom_killed(self) -> bool:
        d = self.dirs.get("memory")
        if not d:
            return False
        for name in ("memory.events", "memory.oom_control"):
            try:
                with open(os.path.join(d, name)) as f:
                    for line in f:
                        k, _, v = line.partition(" ")
                        if k == "oom_kill" and int(v) > 0:
                            return True
            except (OSError, ValueError):
                pass
        if self.version == "v1":
            try:
                with open(os.path.join(d, "memory.failcnt")) as f:
                    failcnt = int(f.read())
                with open(os.path.join(d, "memory.max_usage_in_bytes")) as f:
                    peak = int(f.read())
                with open(os.path.join(d, "memory.limit_in_bytes")) as f:
                    limit = int(f.read())
                return failcnt > 0 and peak >= limit * 0.98
            except (OSError, ValueError):
                pass
        return False

    def memory_peak(self) -> int | None:
        d = self.dirs.get("memory")
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            try:
                with open(os.path.join(d, name)) as f:
                    return int(f.read())
            except (OSError, ValueError, TypeError):
                continue
        return None

    def remove(self):
        for d in set(self.dirs.values()):
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _write(d: str, name: str, value: str) -> bool:
    try:
        with open(os.path.join(d, name), "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _reachable_by_others(path: str) -> bool:
    """Whether an unrelated uid can reach ``path``: o+x on every ancestor directory and o+r
    on the path itself."""
    path = os.path.abspath(path)
    parts = path.split("/")
    cur = "/"
    for p in parts[1:-1]:
        cur = os.path.join(cur, p)
        try:
            if not os.stat(cur).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    try:
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


# --------------------------------------------------------------------------- the child


@dataclasses.dataclass
class SandboxOptions:
    platform: str = "cpu"
    probe: bool = False                   # start the interpreter only (see best_mode)
    limits: Limits = dataclasses.field(default_factory=Limits)
    base_dir: str | None = None
    mode: str | None = None               # None: the strongest that works here; or
                                          # "bwrap-unprivileged", "bwrap", "none"


_LIVE: "weakref.WeakSet[SandboxedChild]" = weakref.WeakSet()


@atexit.register
def _close_live_children():
    """At interpreter exit no child, run dir or cgroup is left behind."""
    for child in list(_LIVE):
        try:
            child.close()
        except Exception:  # noqa: BLE001
            pass


class SandboxedChild:
    """One child process for one candidate. ``start()`` spawns it and returns after the
    launcher's report; ``hello()`` waits until JAX is imported (before any candidate code)."""

    def __init__(self, options: SandboxOptions | None = None):
        _LIVE.add(self)
        self.opt = options or SandboxOptions()
        self.run_dir = tempfile.mkdtemp(prefix="jaxbench-", dir=self.opt.base_dir)
        os.chmod(self.run_dir, 0o711)
        self.in_dir = os.path.join(self.run_dir, "in")
        self.host_work = os.path.join(self.run_dir, "work")
        os.mkdir(self.in_dir, 0o755)
        os.mkdir(os.path.join(self.in_dir, "sets"), 0o755)
        os.mkdir(self.host_work, 0o700)
        self.proc: subprocess.Popen | None = None
        self.cgroup: Cgroup | None = None
        self.protections: dict = {}
        self.launcher: dict = {}
        self.hello_info: dict | None = None
        self._buf = b""
        self._status_r = None
        self._streams: dict[str, _Drain] = {}
        self._work_via_proc = False
        self.started_at = None
        self.closed = False

    # -- spawning
    def start(self, timeout: float = 30.0):
        mode = self.opt.mode or best_mode(self.opt.platform)
        lim = self.opt.limits
        is_root = os.geteuid() == 0
        uid = gid = None
        if is_root and mode in ("bwrap-unprivileged", "none-unprivileged"):
            uid = gid = SANDBOX_UID_BASE + secrets.randbelow(1 << 20)
        stage: list[tuple[str, str]] = []
        binds: list[tuple[str, str]] = []

        def src_for(path: str) -> str:
            if uid is None or _reachable_by_others(path):
                return path
            st_dir = os.path.join(self.run_dir, "stage")
            os.makedirs(st_dir, mode=0o755, exist_ok=True)
            target = os.path.join(st_dir, str(len(stage)))
            if os.path.isdir(path):
                os.mkdir(target, 0o755)
            else:
                open(target, "w").close()
                os.chmod(target, 0o644)
            stage.append((path, target))
            return target

        site = _site_packages()
        prefix = _python_prefix()
        pybin = _python_binary()
        child_in, child_work = self.in_dir, self.host_work
        child_site = [site]
        child_file = CHILD_FILE
        env = {"HOME": "/tmp", "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
               "JAX_PLATFORMS": self.opt.platform, "TF_CPP_MIN_LOG_LEVEL": "2",
               "PYTHONDONTWRITEBYTECODE": "1", "JAX_ENABLE_COMPILATION_CACHE": "false"}
        if self.opt.platform != "cpu":
            for k, v in os.environ.items():
                if k.startswith(ACCEL_ENV_PREFIXES) and not any(w in k for w in ACCEL_ENV_DENY):
                    env[k] = v

        if uid is not None:
            os.chown(self.host_work, uid, gid)
        if mode.startswith("bwrap"):
            info = bwrap_info()
            flags = set(info["flags"])
            argv = [info["path"], "--unshare-all", "--unshare-user"]
            if "--disable-userns" in flags:
                argv.append("--disable-userns")
            argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL",
                     "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID),
                     "--hostname", "jaxbench", "--clearenv"]
            for k, v in sorted(env.items()):
                argv += ["--setenv", k, v]
            # system libraries (mirroring merged-/usr symlinks)
            for top in ("/lib", "/lib64", "/lib32", "/libx32"):
                if os.path.islink(top):
                    argv += ["--symlink", os.readlink(top), top]
                elif os.path.isdir(top):
                    argv += ["--ro-bind", src_for(top), top]
            for d in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32"):
                if os.path.isdir(d) and not os.path.islink(d):
                    argv += ["--ro-bind", src_for(d), d]
            if os.path.exists("/etc/ld.so.cache"):
                argv += ["--ro-bind", src_for("/etc/ld.so.cache"), "/etc/ld.so.cache"]
            argv += ["--ro-bind", src_for(prefix), prefix]
            base_site = os.path.join(prefix, "lib", f"python{sys.version_info[0]}."
                                     f"{sys.version_info[1]}", "site-packages")
            if os.path.isdir(base_site):
                argv += ["--tmpfs", base_site]            # hide the base interpreter's packages
            for entry in _site_entries(site):
                argv += ["--ro-bind", src_for(os.path.join(site, entry)), f"/site/{entry}"]
            argv += ["--ro-bind", src_for(CHILD_FILE), "/harness/sandbox_child.py"]
            argv += ["--ro-bind", self.in_dir, "/in", "--bind", self.host_work, "/work",
                     "--proc", "/proc", "--dev", "/dev"]
            if "--size" in flags:
                argv += ["--size", str(lim.tmp_bytes)]
            argv += ["--tmpfs", "/tmp"]
            if "--size" in flags:
                argv += ["--size", str(min(lim.tmp_bytes, 256 << 20))]
            argv += ["--tmpfs", "/dev/shm"]
            if self.opt.platform != "cpu":
                argv += _accelerator_binds(self.opt.platform)
            # the root (bubblewrap's own tmpfs) read-only: only /work, /tmp and /dev/shm take writes
            argv += ["--remount-ro", "/"]
            argv += ["--chdir", "/work", "--", pybin, "-I", "-S", "-B",
                     "/harness/sandbox_child.py", "--in", "/in", "--work", "/work",
                     "--site", "/site"]
            run_env = {"PATH": "/usr/bin:/bin"}
            chdir = "/"
        else:
            if uid is not None and not _reachable_by_others(prefix):
                # the interpreter lives where the sandbox uid cannot go: run it from a staged
                # bind mount (private mount namespace), its shared library with it
                staged = src_for(prefix)
                pybin = os.path.join(staged, os.path.relpath(pybin, prefix))
                env["LD_LIBRARY_PATH"] = os.path.join(staged, "lib")
            child_site = [src_for(site)]
            child_file = src_for(CHILD_FILE)
            argv = [pybin, "-I", "-S", "-B", child_file, "--in", child_in, "--work", child_work,
                    ] + sum((["--site", s] for s in child_site), [])
            run_env = env
            chdir = child_work
        if self.opt.probe:
            argv.append("--probe")

        # rlimits
        rl = {"cpu": lim.cpu_seconds, "fsize": lim.file_bytes, "nofile": lim.open_files,
              "core": 0}
        if uid is not None or not is_root:
            rl["nproc"] = lim.nproc
        cg_info = cgroup_info() if is_root else None
        as_limit = lim.address_space_bytes
        if as_limit is None and self.opt.platform == "cpu":
            as_limit = (lim.memory_bytes + (16 << 30)) if cg_info else max(2 * lim.memory_bytes, 8 << 30)
        if as_limit:
            rl["as"] = as_limit
        # cgroup
        if cg_info:
            try:
                self.cgroup = Cgroup(cg_info, f"c-{secrets.token_hex(6)}", lim.memory_bytes, lim.pids)
            except OSError:
                self.cgroup = None
        private_mounts = is_root
        work_tmpfs = None
        if is_root and uid is not None:
            work_tmpfs = {"path": self.host_work, "bytes": lim.work_bytes, "uid": uid, "gid": gid}
        r, w = os.pipe()
        self._cpus = lim.cpus if lim.cpus is not None else default_cpus(self.opt.platform)
        cfg = {"status_fd": w, "argv": argv, "env": run_env, "rlimits": rl,
               "cgroup_procs": self.cgroup.procs_files if self.cgroup else [],
               "uid": uid, "gid": gid, "private_mounts": private_mounts, "stage": stage,
               "work_tmpfs": work_tmpfs, "unshare_fallback": not mode.startswith("bwrap"),
               "chdir": chdir, "parent_pid": os.getpid()}
        launch_argv = [sys.executable, "-I", "-S", "-B", LAUNCH_FILE, json.dumps(cfg)]
        self.started_at = time.monotonic()
        self._stat0 = _cpu_times()
        try:
            self.proc = subprocess.Popen(
                launch_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, pass_fds=(w,), start_new_session=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, cwd="/")
        finally:
            os.close(w)
        self._status_r = r
        for name, stream in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            self._streams[name] = _Drain(stream, lim.output_cap)
        try:
            self.launcher = self.recv(timeout)
        except (PhaseTimeout, ChildGone) as exc:
            err = self.stderr_tail()
            self.close()
            raise SandboxError(f"launcher did not report ({type(exc).__name__}): {err[-2000:]}")
        if self.launcher.get("type") != "launcher":
            self.close()
            raise SandboxError(f"unexpected launcher reply {self.launcher!r}")
        steps = self.launcher.get("steps", {})
        self._work_via_proc = "work_tmpfs_bytes" in steps
        self.protections = self._protections(mode, steps, uid, rl)
        return self

    def _protections(self, mode, steps, uid, rl) -> dict:
        bw = mode.startswith("bwrap")
        info = bwrap_info() if bw else None
        ns = (["user", "pid", "net", "ipc", "uts", "cgroup", "mount"] if bw
              else list(steps.get("namespaces", [])) + (["mount"] if steps.get("private_mount_ns") else []))
        return {
            "sandbox": "bubblewrap" if bw else "none",
            "bubblewrap_version": info["version"] if info else None,
            "namespaces": ns,
            "disable_userns": bool(bw and "--disable-userns" in info["flags"]),
            "die_with_parent": bw,
            "new_session": True,
            "cap_drop_all": bw,
            "minimal_filesystem": bw,
            "clearenv": True,
            "private_tmp": bw,
            "unprivileged_uid": steps.get("euid", 0) != 0,
            "host_uid": steps.get("euid"),
            "no_new_privs": bool(steps.get("no_new_privs")),
            "cgroup": self.cgroup.version if self.cgroup else None,
            "cgroup_pids_max": bool(self.cgroup and self.cgroup.active["pids"] and steps.get("cgroups_joined")),
            "cgroup_memory_max": bool(self.cgroup and self.cgroup.active["memory"] and steps.get("cgroups_joined")),
            "rlimits": sorted(steps.get("rlimits", [])),
            "work_dir_quota": bool(steps.get("work_tmpfs_bytes")),
            "cpu_affinity": None,          # set by hello(): the CPUs the child is confined to
            "cpu_pinning": None,           # "cpuset" (cannot be undone) or "affinity"
            "oom_score_adj": steps.get("oom_score_adj"),
            "phase_timeouts": True,
            "process_group_kill": True,
            "launcher_errors": self.launcher.get("errors", []),
        }

    # -- the status channel
    def send(self, obj: dict):
        data = (json.dumps(obj) + "\n").encode()
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ChildGone("stdin closed") from None

    def recv(self, timeout: float, max_line: int = 8 << 20) -> dict:
        end = time.monotonic() + timeout
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line, self._buf = self._buf[:nl], self._buf[nl + 1:]
                try:
                    obj = json.loads(line)
                except ValueError:
                    return {"type": "garbage", "text": line[:200].decode("utf-8", "replace")}
                return obj if isinstance(obj, dict) else {"type": "garbage", "text": str(obj)[:200]}
            if len(self._buf) > max_line:
                return {"type": "garbage", "text": "status line over the cap"}
            left = end - time.monotonic()
            if left <= 0:
                raise PhaseTimeout()
            ready, _, _ = select.select([self._status_r], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self._status_r, 1 << 16)
                if not chunk:
                    raise ChildGone("status channel closed")
                self._buf += chunk

    def hello(self, timeout: float) -> dict:
        msg = self.recv(timeout)
        if msg.get("type") == "launch_failed":
            raise SandboxError(f"exec failed: {msg.get('error')}")
        if msg.get("type") != "hello":
            raise SandboxError(f"child did not say hello: {msg!r}")
        self.hello_info = msg
        self._pin()
        return msg

    def _pin(self):
        """Confine the child to its CPUs now that JAX is initialised (XLA sized its thread
        pool for the whole machine: a one-thread pool can deadlock TPU interpret mode's
        callbacks) and before any candidate code exists in it."""
        cpus = getattr(self, "_cpus", None)
        if not cpus or self.proc is None:
            return
        if cpus == ["auto"]:
            try:
                allowed = sorted(os.sched_getaffinity(0))
            except OSError:
                return
            core = least_busy_core(getattr(self, "_stat0", {}), _cpu_times(), allowed)
            if core is None:
                return
            cpus = [core]
        pids = [self.proc.pid] + self._descendants(self.proc.pid)
        if self.cgroup and self.cgroup.restrict_cpus(cpus, pids):
            self.protections["cpu_pinning"] = "cpuset"
        else:
            ok = True
            for pid in pids:
                try:
                    tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
                except OSError:
                    continue
                for tid in tids:
                    try:
                        os.sched_setaffinity(tid, cpus)
                    except OSError:
                        ok = False
            self.protections["cpu_pinning"] = "affinity" if ok else None
        if self.protections["cpu_pinning"]:
            self.protections["cpu_affinity"] = list(cpus)

    # -- the child's files
    @property
    def work(self) -> "SafeDir":
        if self._work_via_proc and self.proc is not None:
            return SafeDir(f"/proc/{self.proc.pid}/root{self.host_work}")
        return SafeDir(self.host_work)

    def stdout_tail(self) -> str:
        return self._streams["stdout"].text() if "stdout" in self._streams else ""

    def stderr_tail(self) -> str:
        return self._streams["stderr"].text() if "stderr" in self._streams else ""

    def output_info(self) -> dict:
        return {k: {"bytes": d.total, "truncated": d.total > d.cap} for k, d in self._streams.items()}

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout: float = 5.0):
        """(returncode, signal name or None, oom_killed) after the child ended."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.wait(timeout=5)
        sig = None
        if rc < 0:
            sig = signal.Signals(-rc).name
        elif rc > 128 and rc - 128 < 65:      # bubblewrap reports a signalled child as 128+N
            try:
                sig = signal.Signals(rc - 128).name
            except ValueError:
                sig = None
        oom = bool(self.cgroup and self.cgroup.oom_killed())
        return rc, sig, oom

    def _children_of(self, pid: int) -> list[int]:
        out = []
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            pass
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    if int(fields[1]) == pid:
                        out.append(int(d))
                except (OSError, IndexError, ValueError):
                    pass
        return out

    def dump_stacks(self, wait_s: float = 0.5) -> str:
        """Ask the child's Python processes for their stacks (faulthandler on SIGUSR1, to
        stderr) before a timeout kill; returns the dump from the captured stderr."""
        if self.proc is None or self.proc.poll() is not None:
            return ""
        before = self._streams["stderr"].total
        for pid in self._descendants(self.proc.pid):
            try:
                exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                continue
            if exe.startswith("python"):
                try:
                    os.kill(pid, signal.SIGUSR1)
                except OSError:
                    pass
        end = time.monotonic() + wait_s
        while time.monotonic() < end and self._streams["stderr"].total == before:
            time.sleep(0.02)
        time.sleep(0.05)
        text = self.stderr_tail()
        i = text.rfind("Thread 0x")
        j = text.find("Current thread 0x")
        k = min([x for x in (i, j) if x >= 0], default=-1)
        return text[k:] if k >= 0 else ""

    def _descendants(self, pid: int) -> list[int]:
        out, todo = [], [pid]
        while todo:
            kids = self._children_of(todo.pop())
            out.extend(kids)
            todo.extend(kids)
        return out

    def kill(self):
        """Kill everything the child started. The launcher stays resident as a subreaper, so
        the sandbox's processes are killed first (SIGKILL to the PID namespace's init takes the
        whole namespace down) and the launcher reaps them and exits; then the process group
        and whatever the cgroup still holds. No orphan or zombie is left."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            for pid in reversed(self._descendants(proc.pid)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if self.cgroup:
                for pid in self.cgroup.pids():
                    if pid != proc.pid:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except OSError:
                            pass
            # the launcher exits once it has reaped every descendant; tearing down hundreds of
            # processes (a fork bomb) takes seconds, so it gets time before it is killed itself
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        if self.cgroup:
            self.cgroup.kill_all()
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def close(self):
        if self.closed:
            return
        self.closed = True
        try:
            if self.proc is not None and self.proc.poll() is None:
                try:
                    self.send({"cmd": "exit"})
                    self.proc.wait(timeout=2)
                except (ChildGone, subprocess.TimeoutExpired):
                    pass
            self.kill()
            for d in self._streams.values():
                d.join(2.0)
            if self.proc is not None:
                for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                    try:
                        s.close()
                    except OSError:
                        pass
        finally:
            if self._status_r is not None:
                try:
                    os.close(self._status_r)
                except OSError:
                    pass
                self._status_r = None
            if self.cgroup:
                self.cgroup.remove()
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Drain:
    """Reads a pipe to its end in a thread, keeping the first and the last ``cap/2`` bytes."""

    def __init__(self, stream, cap: int):
        self.stream, self.cap = stream, cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        half = self.cap // 2
        fd = self.stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            if len(self.head) < half:
                take = half - len(self.head)
                self.head += chunk[:take]
                chunk = chunk[take:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > half:
                    del self.tail[:len(self.tail) - half]

    def join(self, timeout):
        self.thread.join(timeout)

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", "replace")
        tail = bytes(self.tail).decode("utf-8", "replace")
        if self.total > len(self.head) + len(self.tail):
            return head + f"\n[... {self.total - len(self.head) - len(self.tail)} bytes dropped ...]\n" + tail
        return head + tail


def _accelerator_binds(platform: str) -> list[str]:
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


# --------------------------------------------------------------------------- safe reading

class SafeDir:
    """Read-only access to a directory the child wrote: no symlink is followed, only regular
    files are read, every read has a size cap, nothing blocks on FIFOs."""

    DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC

    def __init__(self, path: str):
        self.path = path

    def _dir_fd(self, parts: list[str]) -> int:
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for p in parts:
                if p in ("", ".", "..") or "/" in p:
                    raise OSError(errno.EINVAL, f"bad path component {p!r}")
                nfd = os.open(p, self.DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nfd
            return fd
        except BaseException:
            os.close(fd)
            raise

    def listdir(self, rel: str = "") -> list[str]:
        fd = self._dir_fd([p for p in rel.split("/") if p])
        try:
            return os.listdir(fd)
        finally:
            os.close(fd)

    def read(self, rel: str, max_bytes: int) -> bytes:
        parts = [p for p in rel.split("/") if p]
        dfd = self._dir_fd(parts[:-1])
        try:
            fd = os.open(parts[-1], os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) |
                         os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        finally:
            os.close(dfd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, f"{rel} is not a regular file")
            if st.st_size > max_bytes:
                raise OSError(errno.EFBIG, f"{rel} is {st.st_size} bytes, over the cap {max_bytes}")
            chunks, total = [], 0
            while True:
                b = os.read(fd, 1 << 22)
                if not b:
                    break
                total += len(b)
                if total > max_bytes:
                    raise OSError(errno.EFBIG, f"{rel} grew over the cap {max_bytes}")
                chunks.append(b)
            return b"".join(chunks)
        finally:
            os.close(fd)


# --------------------------------------------------------------------------- probing

_MODE_CACHE: dict[str, str] = {}
_MODE_LOCK = threading.Lock()


def _probe_mode(mode: str, platform: str) -> bool:
    try:
        child = SandboxedChild(SandboxOptions(platform=platform, mode=mode, probe=True,
                                              limits=Limits(memory_bytes=1 << 30)))
    except OSError:
        return False
    try:
        child.start(timeout=30)
        msg = child.recv(60)
        return msg.get("type") == "hello" and not child.launcher.get("errors")
    except (SandboxError, PhaseTimeout, ChildGone, OSError):
        return False
    finally:
        child.close()


def best_mode(platform: str = "cpu") -> str:
    """The strongest sandbox mode that works on this machine (probed once per process):
    ``bwrap-unprivileged`` (bubblewrap + a fresh unprivileged host uid), ``bwrap``
    (bubblewrap as the calling user), ``none-unprivileged``/``none`` (no bubblewrap: cleared
    environment, rlimits, cgroup, new session, the namespaces the launcher can still make).
    A root worker never runs a candidate as root outside bubblewrap: with no unprivileged mode
    left it raises :class:`SandboxError`."""
    forced = os.environ.get("JAXBENCH_SANDBOX_MODE")
    if forced:
        return forced
    with _MODE_LOCK:
        if platform in _MODE_CACHE:
            return _MODE_CACHE[platform]
        root = os.geteuid() == 0
        if root:
            candidates = (["bwrap-unprivileged", "bwrap"] if bwrap_info() else []) + \
                ["none-unprivileged"]
        else:
            candidates = (["bwrap"] if bwrap_info() else []) + ["none"]
        chosen = None
        for mode in candidates:
            if mode == "none" or _probe_mode(mode, platform):
                chosen = mode
                break
        if chosen is None:
            raise SandboxError("no sandbox mode works here (tried " + ", ".join(candidates) +
                               "); refusing to run candidates as root")
        _MODE_CACHE[platform] = chosen
        return chosen


def available_protections(platform: str = "cpu") -> dict:
    """What this machine offers a candidate child (probing, once, by starting one)."""
    mode = best_mode(platform)
    child = SandboxedChild(SandboxOptions(platform=platform, mode=mode,
                                          limits=Limits(memory_bytes=1 << 30)))
    try:
        child.start()
        prot = dict(child.protections)
    finally:
        child.close()
    prot["mode"] = mode
    info = bwrap_info()
    prot["bubblewrap_available"] = bool(info)
    prot["bubblewrap_flags"] = info["flags"] if info else []
    cg = cgroup_info()
    prot["cgroup_available"] = cg["version"] if cg else None
    prot["running_as_root"] = os.geteuid() == 0
    return prot
