"""The host a child runs on: its CPUs (which core a child is pinned to), its interpreter and
packages, and which of its paths a fresh unprivileged uid can reach (the rest is staged)."""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from collections.abc import Callable, Iterable
from typing import NamedTuple

from .. import environment
from . import cores
from .options import SandboxError


class CoreTimes(NamedTuple):
    """One core's counters from /proc/stat, in jiffies since boot: ``busy`` is everything but
    idle and iowait (steal included), ``steal`` the time the hypervisor ran another guest."""

    busy: int
    total: int
    steal: int


# core number -> its counters
CpuTimes = dict[int, CoreTimes]


def default_cpus(platform: str) -> list[int] | list[str] | None:
    """The CPUs a child runs on. On the ``cpu`` target every child (baseline and candidate)
    is confined to ONE core once JAX is initialised (see ``SandboxedChild._pin``): cross-core
    hand-offs between the dispatching thread and XLA's worker threads dominate sub-millisecond
    kernels and make unpinned timings several times slower and far noisier. ``JAXBENCH_CPU_CORES`` ("3" or "2,3") chooses; the default is the
    last core this process may use. Accelerator children are not pinned."""
    if platform != "cpu":
        return None
    env = (environment.get("JAXBENCH_CPU_CORES") or "").strip()
    if env:
        if env.lower() in ("all", "none"):
            return None
        return sorted({int(x) for x in env.replace(" ", "").split(",") if x})
    # "auto": the least busy core outside the timing cores once JAX is initialised (cores.py)
    return ["auto"] if len(cores.machine_cores()) > 1 else None


def cpu_times() -> CpuTimes:
    """Per-core counters from /proc/stat."""
    out: CpuTimes = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu") and line[3:4].isdigit():
                    parts = line.split()
                    vals = [int(x) for x in parts[1:]]
                    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
                    steal = vals[7] if len(vals) > 7 else 0
                    out[int(parts[0][3:])] = CoreTimes(sum(vals) - idle, sum(vals), steal)
    except (OSError, ValueError):
        pass
    return out


def least_busy_core(before: CpuTimes, after: CpuTimes, allowed: Iterable[int]) -> int | None:
    """The allowed core that was least busy between two /proc/stat snapshots (ties: the
    highest-numbered core, away from the interrupt-heavy core 0)."""
    best: tuple[float, int] | None = None
    for c in sorted(allowed):
        if c in before and c in after:
            db, dt = after[c][0] - before[c][0], after[c][1] - before[c][1]
            frac = db / dt if dt > 0 else 1.0
            if best is None or frac <= best[0]:
                best = (frac, c)
    return best[1] if best else None


def python_prefix() -> str:
    return sys.base_prefix


def python_binary() -> str:
    exe = os.path.realpath(sys.executable)
    if not exe.startswith(python_prefix().rstrip("/") + "/"):
        # a venv python that is not a symlink into the base prefix
        ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        exe = os.path.join(python_prefix(), "bin", ver)
    return exe


def site_packages() -> str:
    spec = importlib.util.find_spec("jax")
    if spec is None or not spec.origin:
        raise SandboxError("jax is not installed")
    return os.path.dirname(os.path.dirname(spec.origin))


def site_dirs(allowed: Callable[[str], list[str]]) -> list[str]:
    """The directories a child imports from: JAX's own, then every other directory on this
    process's ``sys.path`` holding an entry ``allowed(dir)`` lists that no earlier one holds (in
    ``sys.path``'s order, as this process would import it). One directory on most hosts; more
    where JAX is installed in one place and the rest in another (a TPU VM's preinstalled JAX
    beside packages installed with ``pip --target``, a user site)."""
    first = site_packages()
    out, seen = [first], set(allowed(first))
    for entry in sys.path:
        d = os.path.abspath(entry) if entry else ""
        if not d or d in out or not os.path.isdir(d):
            continue
        try:
            new = set(allowed(d)) - seen
        except OSError:
            continue
        if new:
            out.append(d)
            seen |= new
    return out


def reachable_by_others(path: str) -> bool:
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


class Stager:
    """``stager(path)``: the path a child running as ``uid`` reads ``path`` from. That is the
    path itself where any uid can reach it (or no fresh uid is used); otherwise an empty
    placeholder under ``run_dir/stage``, and (path, placeholder) joins ``pairs``, which the
    launcher bind-mounts in its private mount namespace."""

    def __init__(self, run_dir: str, uid: int | None):
        self.run_dir, self.uid = run_dir, uid
        self.pairs: list[tuple[str, str]] = []

    def __call__(self, path: str) -> str:
        if self.uid is None or reachable_by_others(path):
            return path
        st_dir = os.path.join(self.run_dir, "stage")
        os.makedirs(st_dir, mode=0o755, exist_ok=True)
        target = os.path.join(st_dir, str(len(self.pairs)))
        if os.path.isdir(path):
            os.mkdir(target, 0o755)
        else:
            open(target, "w").close()
            os.chmod(target, 0o644)
        self.pairs.append((path, target))
        return target
