"""Per-child cgroups: where they can be made (v2, or the v1 ``pids``/``memory``/``cpuset``
hierarchies), their limits, and killing and removing them."""

from __future__ import annotations

import functools
import os
import secrets
import signal
import time
from typing import Literal, TypedDict


class CgroupInfo(TypedDict):
    """Where per-child cgroups are made (:func:`cgroup_info`)."""

    version: Literal["v1", "v2"]
    bases: dict[str, str]  # controller (pids, memory, cpuset) -> the directory children go under


def _mounts() -> list[tuple[str, str, str]]:
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                parts, rparts = left.split(), right.split()
                if len(parts) >= 5 and len(rparts) >= 3:
                    out.append((parts[4], rparts[0], rparts[2]))  # mountpoint, fstype, opts
    except OSError:
        pass
    return out


@functools.lru_cache(maxsize=1)
def cgroup_info() -> CgroupInfo | None:
    """Where per-child cgroups can be created: v2 with the pids and memory controllers, or the
    v1 ``pids`` and ``memory`` hierarchies; None where neither is writable."""
    if os.geteuid() != 0:
        return None
    own: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrl_names, path = line.rstrip("\n").split(":", 2)
                for c in ctrl_names.split(",") if ctrl_names else [""]:
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
                    if ctrl == "cpuset":  # a v1 cpuset must have cpus and mems before use
                        for fname in ("cpuset.cpus", "cpuset.mems"):
                            with open(os.path.join(os.path.dirname(base), fname)) as src:
                                val = src.read().strip()
                            if not open(os.path.join(base, fname)).read().strip():
                                _write(base, fname, val)
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

    def __init__(self, info: CgroupInfo, name: str, memory_bytes: int, pids: int) -> None:
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
            if "cpuset" in self.dirs:  # start with the parent's CPUs and memory nodes
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
        return sorted({os.path.join(d, "cgroup.procs") for c, d in self.dirs.items() if c != "cpuset"})

    def restrict_cpus(self, cpus: list[int], pids: list[int]) -> bool:
        """Confine ``pids`` (all their threads) to ``cpus`` with the cpuset controller: the
        processes cannot widen it again (sched_setaffinity stays inside the cpuset)."""
        d = self.dirs.get("cpuset")
        if not d:
            return False
        if not _write(d, "cpuset.cpus", ",".join(str(c) for c in cpus)):
            return False
        if self.version == "v2":
            return True  # the processes are already in this cgroup
        ok = True
        for pid in pids:
            ok = _write(d, "cgroup.procs", str(pid)) and ok
        return ok

    def pids(self) -> list[int]:
        out: set[int] = set()
        for c, d in self.dirs.items():
            if c == "cpuset" and self.version == "v1" and len(self.dirs) > 1:
                continue
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    out.update(int(x) for x in f.read().split())
            except OSError:
                pass
        return sorted(out)

    def kill_all(self, deadline_s: float = 3.0) -> bool:
        if self.version == "v2":
            _write(self.dirs["pids"], "cgroup.kill", "1")
        elif "pids" in self.dirs:
            _write(self.dirs["pids"], "pids.max", "0")  # no new forks while killing
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

    def at_memory_limit(self, share: float = 0.9) -> bool:
        """Has the group run into its memory limit and does it still hold most of it? A child
        there is reclaiming its own code pages to go on (thrashing) or about to be OOM-killed:
        how long that takes depends on the machine's load, not on the candidate."""
        d = self.dirs.get("memory")
        if d is None or not self.active["memory"]:
            return False
        if self.oom_killed():
            return True
        try:
            if self.version == "v2":
                with open(os.path.join(d, "memory.events")) as f:
                    events = dict(line.split() for line in f if line.strip())
                hit = int(events.get("max", 0)) > 0
                now_file, max_file = "memory.current", "memory.max"
            else:
                with open(os.path.join(d, "memory.failcnt")) as f:
                    hit = int(f.read()) > 0
                now_file, max_file = "memory.usage_in_bytes", "memory.limit_in_bytes"
            with open(os.path.join(d, now_file)) as f:
                current = int(f.read())
            with open(os.path.join(d, max_file)) as f:
                limit = int(f.read())
        except (OSError, ValueError):
            return False
        return hit and current >= share * limit

    def memory_peak(self) -> int | None:
        d = self.dirs.get("memory")
        if d is None:  # no memory controller here
            return None
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            try:
                with open(os.path.join(d, name)) as f:
                    return int(f.read())
            except (OSError, ValueError):
                continue
        return None

    def remove(self) -> None:
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
