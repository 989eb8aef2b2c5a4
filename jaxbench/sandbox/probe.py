"""Which sandbox mode works on this machine (probed once per process by starting a child),
and what this machine offers a candidate child."""

from __future__ import annotations

import os
import threading
from typing import Any

from .. import environment
from .bwrap import bwrap_info
from .cgroups import cgroup_info
from .child import SandboxedChild
from .options import ChildGone, Limits, PhaseTimeout, SandboxError, SandboxOptions

_MODE_CACHE: dict[str, str] = {}
_MODE_LOCK = threading.Lock()


def _probe_mode(mode: str, platform: str) -> bool:
    try:
        child = SandboxedChild(
            SandboxOptions(platform=platform, mode=mode, probe=True, limits=Limits(memory_bytes=1 << 30))
        )
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
    forced: str | None = environment.get("JAXBENCH_SANDBOX_MODE")
    if forced:
        if forced.startswith("bwrap") and not bwrap_info():
            raise SandboxError(
                f"JAXBENCH_SANDBOX_MODE={forced} needs bubblewrap, which is not installed here "
                "(Debian package bubblewrap); unset it to use the strongest mode that works"
            )
        return forced
    with _MODE_LOCK:
        if platform in _MODE_CACHE:
            return _MODE_CACHE[platform]
        root = os.geteuid() == 0
        if root:
            candidates = (["bwrap-unprivileged", "bwrap"] if bwrap_info() else []) + ["none-unprivileged"]
        else:
            candidates = (["bwrap"] if bwrap_info() else []) + ["none"]
        chosen = None
        for mode in candidates:
            if mode == "none" or _probe_mode(mode, platform):
                chosen = mode
                break
        if chosen is None:
            raise SandboxError(
                "no sandbox mode works here (tried " + ", ".join(candidates) + "); refusing to run candidates as root"
            )
        _MODE_CACHE[platform] = chosen
        return chosen


def machine_report(platform: str = "cpu") -> dict[str, Any]:
    """What this machine offers any child, beside one child's own protections: the mode, and
    whether bubblewrap (with which flags) and cgroups are here."""
    mode = best_mode(platform)
    info = bwrap_info()
    cg = cgroup_info()
    return {
        "mode": mode,
        "bubblewrap_available": bool(info),
        "bubblewrap_flags": info["flags"] if info else [],
        "cgroup_available": cg["version"] if cg else None,
        "running_as_root": os.geteuid() == 0,
    }


def available_protections(platform: str = "cpu") -> dict[str, Any]:
    """What this machine offers a candidate child (probing, once, by starting one)."""
    mode = best_mode(platform)
    child = SandboxedChild(SandboxOptions(platform=platform, mode=mode, limits=Limits(memory_bytes=1 << 30)))
    try:
        child.start()
        prot = dict(child.protections)
    finally:
        child.close()
    prot.update(machine_report(platform))
    return prot
