"""The timing core: where a CPU timer's timing phase runs, one at a time, and how busy the core
was with other work while it did (TRUST.md: load never decides a verdict).

A timing phase on the ``cpu`` target measures the program's time on one core, so anything else
that runs on that core is noise. Three things keep it out:

* **One timing phase per core at a time**, on every machine: a timer takes the core's lock
  (:func:`timing_slot`, an ``flock`` under the device-lock directory, shared by the threads and
  processes of every worker of the host) for its timing phase only; waiting for it is the
  harness's time, never the candidate's.
* **A dedicated core** where the machine can spare one (:func:`timing_cores`: by default the last
  core on machines of :data:`MIN_CORES_FOR_DEDICATION` or more; ``JAXBENCH_TIMING_CORES`` chooses
  on any machine). The portal's own processes (web server, worker, export children, timers
  outside their timing phase) stay on the other cores (:func:`keep_off_timing_cores`,
  :func:`work_cores`); a timer moves onto the dedicated core for its timing phase and back.
  On a 2-core machine dedicating one core would halve what the rest can use, so the default
  there is one lock per core and the least busy core (``host.least_busy_core``).
* **Contention measured** on the core during the phase (:func:`contention`): the core's busy
  time from ``/proc/stat`` less the timer's own CPU time is other work; steal is time the
  hypervisor gave to another guest. Above :data:`CONTENTION_LIMIT` of the phase the
  measurement is not trusted: the harness times it again (MeasurementUntrusted), never labels.
* **Busy neighbours measured** too (:func:`cache_neighbours`): other work on the cores that share
  the timing core's caches (and, on a VM, hyperthread siblings the guest cannot see) slows two
  programs unequally while the timing core itself looks free. A verdict timed beside it is not
  relabelled or retried for it; its interval is widened (``harness.speed.SHARED_SYSTEMATIC``),
  so a loaded run can be less decisive than a quiet one, never contradict it.

Accelerator timers are not pinned: the device lock (``device.py``) makes a device's timing
exclusive, and the host core that dispatches to it is not what is timed.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .. import environment
from . import device

if TYPE_CHECKING:
    from .host import CpuTimes

# dedicate a core by default only where it is at most a quarter of the machine's cores
MIN_CORES_FOR_DEDICATION = 4
# the share of a timing phase the timer's core may spend on other work (other processes, steal)
# before the phase is timed again: past it the timer got less than a quarter of its core, and
# its samples say more about the scheduler than about the program. Lower limits re-time most
# phases of a loaded 2-core host without a dedicated core, where two heavy processes per core
# are ordinary (docs/DESIGN.md "The timing core" has the figures); the interleaved ABBA order
# keeps the ratio honest under the load below it.
CONTENTION_LIMIT = 0.75
# a phase shorter than this many clock ticks is too short to read the cores' counters
MIN_TICKS = 5
# set in a process narrowed by keep_off_timing_cores, so its children still see every core
_MACHINE_ENV = "JAXBENCH_MACHINE_CORES"


def _parse_cores(name: str, raw: str) -> list[int]:
    try:
        return sorted({int(x) for x in raw.replace(" ", "").split(",") if x})
    except ValueError:
        raise environment.ConfigError(f"{name}={raw!r}: write core numbers, e.g. 3 or 2,3") from None


def machine_cores() -> list[int]:
    """The cores the portal may use on this host: this process's affinity, or, where
    :func:`keep_off_timing_cores` narrowed it, the set it had before."""
    raw = (environment.get(_MACHINE_ENV) or "").strip()
    if raw:
        return _parse_cores(_MACHINE_ENV, raw)
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def timing_cores() -> list[int]:
    """The cores dedicated to timing phases ([] where none is): ``JAXBENCH_TIMING_CORES``
    ("3", "2,3", "last" or "none"), else the last core on a machine of at least
    :data:`MIN_CORES_FOR_DEDICATION` cores. At least one core is always left for the rest."""
    cores = machine_cores()
    raw = (environment.get("JAXBENCH_TIMING_CORES") or "").strip().lower()
    if raw == "none" or len(cores) < 2:
        return []
    if raw == "last" or (not raw and len(cores) >= MIN_CORES_FOR_DEDICATION):
        return [cores[-1]]
    if not raw:
        return []
    chosen = _parse_cores("JAXBENCH_TIMING_CORES", raw)
    if not set(chosen) <= set(cores) or len(chosen) >= len(cores):
        raise environment.ConfigError(
            f"JAXBENCH_TIMING_CORES={raw!r}: choose fewer than all of this host's cores {cores}"
        )
    return chosen


def work_cores() -> list[int]:
    """The cores everything but a timing phase runs on."""
    dedicated = set(timing_cores())
    return [c for c in machine_cores() if c not in dedicated]


def set_affinity(pid: int, cpus: list[int]) -> bool:
    """Confine every thread of process ``pid`` (0: this one) to ``cpus``; False where one
    could not be moved (threads that ended meanwhile do not count)."""
    pid = pid or os.getpid()
    ok = True
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tids = [pid]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
        except ProcessLookupError:
            continue
        except OSError:
            ok = False
    return ok


def keep_off_timing_cores() -> list[int] | None:
    """Keep this process (every thread, and the children it starts later) off the dedicated
    timing cores; the web server and the worker call it at start. Returns the cores it now
    runs on, None where no core is dedicated."""
    dedicated = timing_cores()
    if not dedicated:
        return None
    os.environ[_MACHINE_ENV] = ",".join(str(c) for c in machine_cores())
    rest = work_cores()
    return rest if set_affinity(0, rest) else None


def _lock_path(core: int) -> str:
    return os.path.join(device.lock_dir(), f"cpu-core-{core}.timing.lock")


@contextlib.contextmanager
def timing_slot(cores: list[int]) -> Iterator[float]:
    """Hold the timing locks of ``cores`` (in order, so two holders of overlapping sets cannot
    deadlock); yields the seconds spent waiting for them. The kernel drops the locks when
    their holder dies."""
    os.makedirs(device.lock_dir(), mode=0o1777, exist_ok=True)
    t0 = time.monotonic()
    with contextlib.ExitStack() as stack:
        for core in sorted(set(cores)):
            fd = os.open(_lock_path(core), os.O_RDWR | os.O_CREAT, 0o666)
            stack.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, fd, fcntl.LOCK_UN)
        yield time.monotonic() - t0


def _cpu_list(raw: str) -> set[int]:
    """sysfs's CPU list format ("0-3,8,10-11") as a set; empty where it is not one."""
    out: set[int] = set()
    try:
        for part in raw.strip().split(","):
            if not part:
                continue
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        return set()
    return out


@functools.lru_cache(maxsize=1)
def under_hypervisor() -> bool:
    """Whether this machine is a virtual machine (the ``hypervisor`` CPU flag)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return any(line.startswith("flags") and " hypervisor" in line for line in f)
    except OSError:
        return False


def cache_neighbours(timing: list[int], root: str = "/sys/devices/system/cpu") -> list[int]:
    """The machine's other cores that share a cache or a physical core with the ``timing``
    cores (sysfs: every cache level's ``shared_cpu_list``, ``thread_siblings_list``). Where
    sysfs says nothing about a timing core, every other core counts: a VM's guest often cannot
    see which of its cores are hyperthreads of one physical core; there, a core that shares
    nothing with another by sysfs's account has every other core as neighbour too."""
    machine = set(machine_cores())
    near: set[int] = set()
    for core in timing:
        found = _sharing(core, root)
        # nothing known, or a VM's core that shares nothing it can see: every other core
        near |= found if found - {core} or (found and not under_hypervisor()) else machine
    return sorted((near & machine) - set(timing))


@functools.lru_cache(maxsize=256)
def _sharing(core: int, root: str) -> frozenset[int]:
    """The cores sysfs says share a cache or a physical core with ``core`` (itself included;
    empty: sysfs says nothing). Read once per process: the topology does not change under a
    running worker, and every timing round asks."""
    found: set[int] = set()
    base = os.path.join(root, f"cpu{core}")
    paths = [os.path.join(base, "topology", "thread_siblings_list")]
    try:
        paths += [
            os.path.join(base, "cache", d, "shared_cpu_list")
            for d in os.listdir(os.path.join(base, "cache"))
            if d.startswith("index")
        ]
    except OSError:
        pass
    for path in paths:
        try:
            with open(path) as f:
                found |= _cpu_list(f.read())
        except OSError:
            continue
    return frozenset(found)


def contention(
    before: CpuTimes, after: CpuTimes, cores: list[int], own_s: float | None, neighbours: Sequence[int] = ()
) -> dict[str, Any]:
    """How the timer's cores spent a timing phase, from two ``/proc/stat`` snapshots and the
    timer's own CPU seconds over the phase (None: unknown, then other work cannot be told
    from the timer's). Shares of the cores' elapsed time: ``busy`` (any process), ``own`` (the
    timer), ``foreign`` (busy less own: other processes), ``steal`` (another guest, per the
    hypervisor). ``trusted``: foreign plus steal at most :data:`CONTENTION_LIMIT`.
    ``neighbour_busy``: the busy time of the ``neighbours`` (:func:`cache_neighbours`), in
    cores (1.0: one neighbour busy throughout); it never makes a phase untrusted."""
    hz = os.sysconf("SC_CLK_TCK")
    near = [c for c in neighbours if c in before and c in after]
    n_busy = sum(
        (after[c].busy - before[c].busy) / (after[c].total - before[c].total)
        for c in near
        if after[c].total > before[c].total
    )
    busy = total = steal = 0
    for c in cores:
        if c in before and c in after:
            busy += after[c].busy - before[c].busy
            total += after[c].total - before[c].total
            steal += after[c].steal - before[c].steal
    out: dict[str, Any] = {
        "cores": list(cores),
        "elapsed_s": round(total / hz, 3),
        "neighbours": near,
        "neighbour_busy": round(n_busy, 3),
    }
    if total < MIN_TICKS * max(1, len(cores)):
        return {**out, "trusted": True, "note": "the phase was too short to read the cores' counters"}
    out.update(busy=round(busy / total, 3), steal=round(steal / total, 3))
    if own_s is None:
        return {**out, "own": None, "foreign": None, "trusted": True}
    own = min(1.0, own_s * hz / total)
    # busy counts steal as well as every process; the timer's own time is in it too
    foreign = max(0.0, busy / total - own - steal / total)
    out.update(own=round(own, 3), foreign=round(foreign, 3))
    out["trusted"] = foreign + steal / total <= CONTENTION_LIMIT
    return out
