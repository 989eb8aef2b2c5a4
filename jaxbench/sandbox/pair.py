"""The two children of one evaluation, as the trusted side starts them, without JAX: a timer
(runs exported programs on the platform's device) and an export child (runs the candidate's
Python once, on the CPU, no device). Starting them needs no workload, so a command line can
start them first and import JAX while they start (``cli.cmd_evaluate``)."""

from __future__ import annotations

from typing import Any

from .. import environment
from .. import hardware as hw
from . import device
from .child import SandboxedChild
from .options import Limits, SandboxOptions


def platform_hint(hardware: Any) -> str:
    """The JAX platform a timer for ``hardware`` (a target, its slug, or None: this host) runs
    on: the target's; else ``JAXBENCH_PLATFORM``; else the plugin installed (GPU, TPU, or cpu)."""
    if hardware is None:
        return environment.get("JAXBENCH_PLATFORM") or device.installed_platform()
    target = hardware if isinstance(hardware, hw.Target) else hw.get_target(hardware)
    return target.platform


def warm_limits(platform: str) -> Limits:
    """A timer's limits when it is started before its workload is known (the warm pool's): on
    the CPU as ``limits_for``'s floor, 8 GiB (interpret-mode paged attention holds > 4 GiB, and
    the baseline is compiled and timed in the same child); on an accelerator generous for the
    full profile."""
    if platform == "cpu":
        return Limits(memory_bytes=8 << 30)
    return Limits(memory_bytes=64 << 30, pids=2048, nproc=4096, work_bytes=16 << 30, file_bytes=8 << 30)


def covers(have: Limits, need: Limits) -> bool:
    """Whether a child started with ``have`` is as roomy as ``need`` asks."""
    return all(
        getattr(have, k) >= getattr(need, k) for k in ("memory_bytes", "file_bytes", "work_bytes", "pids", "nproc")
    )


def timer_child(platform: str, limits: Limits) -> SandboxedChild:
    """A started timer (SandboxError where it cannot start); its hello comes later."""
    return SandboxedChild(SandboxOptions(platform=platform, limits=limits)).start()


def export_child(limits: Limits | None = None) -> SandboxedChild:
    """A started export child (SandboxError where it cannot start)."""
    return SandboxedChild(SandboxOptions(platform="cpu", role="export", limits=limits or Limits())).start()


def beside(exporter: SandboxedChild, timer: SandboxedChild) -> None:
    """Before the export child's hello (where it is pinned): keep it off its timer's core
    where another is free, so the two work side by side (the timer compiles the baseline while
    the export runs)."""
    exporter.avoid_cores = [c for c in timer.protections.get("cpu_affinity") or [] if isinstance(c, int)]


def start_pair(platform: str) -> tuple[SandboxedChild, SandboxedChild]:
    """A started (timer, export child) pair with :func:`warm_limits`: whole or not at all (the
    timer is closed when the export child cannot start)."""
    timer = timer_child(platform, warm_limits(platform))
    try:
        return timer, export_child()
    except BaseException:
        timer.close()
        raise
