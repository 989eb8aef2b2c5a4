"""Hardware targets: detection from ``jax.devices()`` and the figures charts need.

Each target names the size profile it runs (DESIGN.md): accelerators run ``full``, the CPU runs
``small``. Peaks are bf16 dense FLOP/s and HBM (or DRAM) bandwidth, used for roofline charts and
for the physical-floor plausibility gate.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys

# Platforms whose candidates are pre-checked on CPU before they reach the device: lowering for
# the platform (Mosaic runs on any host) and numerics in TPU interpret mode. Both are TPU's: a
# GPU (Triton) kernel lowers only beside a CUDA toolchain, so GPU targets start on the device.
PRECHECK_PLATFORMS = ("tpu",)


@dataclasses.dataclass(frozen=True)
class Target:
    slug: str
    name: str
    platform: str  # the JAX platform: "cpu", "tpu" or "gpu"
    profile: str  # "full" or "small"
    peak_flops: float  # bf16 FLOP/s
    peak_bandwidth: float  # bytes/s

    @property
    def queue(self) -> str:
        return f"eval.{self.slug}"

    @property
    def is_accelerator(self) -> bool:
        return self.platform != "cpu"

    @property
    def prechecked(self) -> bool:
        return self.platform in PRECHECK_PLATFORMS


TARGETS = {
    t.slug: t
    for t in (
        Target(
            "cpu", "CPU (XLA CPU client, TPU kernels through the Pallas interpreter)", "cpu", "small", 1.0e11, 2.0e10
        ),
        Target("tpu-v6e", "TPU v6e (Trillium)", "tpu", "full", 918e12, 1.64e12),
        Target("tpu-v5e", "TPU v5e", "tpu", "full", 197e12, 0.819e12),
        Target("tpu-v5p", "TPU v5p", "tpu", "full", 459e12, 2.765e12),
        Target("tpu-v4", "TPU v4", "tpu", "full", 275e12, 1.2e12),
        Target("gpu-h200", "NVIDIA H200", "gpu", "full", 989e12, 4.8e12),
        Target("gpu-h100", "NVIDIA H100", "gpu", "full", 989e12, 3.35e12),
    )
}


def get_target(slug: str) -> Target:
    try:
        return TARGETS[slug]
    except KeyError:
        raise KeyError(f"unknown hardware target {slug!r}; known: {', '.join(TARGETS)}") from None


def slug_for_device_kind(platform: str, device_kind: str) -> str:
    """Map a JAX device to a target slug ("TPU v6 lite" -> "tpu-v6e", "NVIDIA H200" -> "gpu-h200")."""
    kind = device_kind.lower()
    if platform == "cpu":
        return "cpu"
    if platform == "tpu":
        m = re.search(r"v(\d+)\s*(lite|e|p)?", kind)
        if m:
            gen, variant = m.group(1), (m.group(2) or "")
            suffix = "e" if variant in ("lite", "e") else variant
            return f"tpu-v{gen}{suffix}"
        return "tpu-" + re.sub(r"[^a-z0-9]+", "-", kind).strip("-")
    if platform in ("gpu", "cuda", "rocm"):
        m = re.search(r"\b([a-z]\d{2,4}[a-z]?)\b", kind.replace("nvidia", ""))
        return "gpu-" + (m.group(1) if m else re.sub(r"[^a-z0-9]+", "-", kind).strip("-"))
    return re.sub(r"[^a-z0-9]+", "-", f"{platform}-{kind}").strip("-")


# jax.export's names for the harness's platforms (it calls a GPU "cuda" or "rocm")
EXPORT_PLATFORMS = {"cpu": "cpu", "tpu": "tpu", "gpu": "cuda"}


def export_platform(platform: str) -> str:
    """The platform name ``jax.export`` lowers a program for on this harness platform."""
    return EXPORT_PLATFORMS.get(platform, platform)


def device_kind_of(slug: str) -> str | None:
    """The JAX device kind of a TPU target ("tpu-v6e" -> "TPU v6 lite", "tpu-v5p" -> "TPU v5"):
    what a TPU kernel is lowered for when the timer's device is not open yet; None otherwise."""
    m = re.fullmatch(r"tpu-v(\d+)(e|p)?", slug or "")
    if not m:
        return None
    return f"TPU v{m.group(1)}" + (" lite" if m.group(2) == "e" else "")


def detect() -> Target:
    """The target this process runs on, from ``jax.devices()``; unknown accelerators get a
    target with zero peaks (their roofline is then unknown, not invented)."""
    import jax  # deferred: JAX loads only when this runs, not when the module is imported

    dev = jax.devices()[0]
    slug = slug_for_device_kind(dev.platform, getattr(dev, "device_kind", ""))
    if slug in TARGETS:
        return TARGETS[slug]
    return Target(slug, getattr(dev, "device_kind", slug), dev.platform, "full", 0.0, 0.0)


# a fresh interpreter that asks JAX for its devices and prints the target, then exits
_DETECT = (
    "import dataclasses, json, sys; from jaxbench.hardware import detect; "
    "sys.stdout.write(json.dumps(dataclasses.asdict(detect())))"
)


def detect_in_child(timeout: float = 300.0) -> Target:
    """:func:`detect` in a short-lived child process. A worker must never open the accelerator
    itself: libtpu lets one process per chip hold it (the worker would lock out every child that
    runs programs), and a GPU client pre-allocates most of the device's memory. The child opens
    the device, reports, and exits, releasing it; on an exclusive device (TPU, GPU) only while
    this process holds the device's lock, so a worker starting beside another one's busy chip
    waits instead of failing."""
    from .sandbox import device  # deferred: the sandbox's lock, needed only here

    lock = device.DeviceLock(device.installed_platform()) if device.exclusive(device.installed_platform()) else None
    if lock is not None:
        lock.acquire()
    try:
        return _detect_in_child(timeout)
    finally:
        if lock is not None:
            lock.release()


class DeviceMissing(RuntimeError):
    """A TPU/GPU plugin is installed but JAX found only the CPU: a worker must not start."""


def device_missing(installed: str, detected: Target) -> str | None:
    """Why a worker on this host must not serve ``detected``'s queue (pure): JAX falls back to
    the CPU, with only a warning, when the accelerator its plugin expects is absent, its driver
    is not loaded or another process holds it; the worker would then serve ``eval.cpu``."""
    if installed == "cpu" or detected.platform == installed:
        return None
    return (
        f"the {installed} plugin is installed but JAX found no {installed} device (it fell back to "
        f"{detected.slug}): the device is missing, its driver is not loaded, or another process holds "
        "it. Check the host with `python -m jaxbench check-env`; to serve the cpu queue on purpose, "
        "set JAXBENCH_WORKER_HARDWARE=cpu and JAXBENCH_WORKER_QUEUES=eval.cpu"
    )


def detect_for_worker(timeout: float = 300.0) -> Target:
    """:func:`detect_in_child`, refusing a host whose accelerator is missing (DeviceMissing)."""
    from .sandbox import device  # deferred: see detect_in_child

    target = detect_in_child(timeout)
    problem = device_missing(device.installed_platform(), target)
    if problem:
        raise DeviceMissing(problem)
    return target


def _detect_in_child(timeout: float) -> Target:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    try:
        out = subprocess.run(
            [sys.executable, "-c", _DETECT], env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"hardware detection did not answer within {timeout:g} s") from None
    if out.returncode != 0:
        tail = "\n".join(out.stderr.strip().splitlines()[-6:])
        raise RuntimeError(f"hardware detection failed (exit {out.returncode}):\n{tail}")
    return Target(**json.loads(out.stdout))


def initialized_backends() -> list[str]:
    """The JAX backends this process has initialized (none if it never touched a device). Read
    without initializing anything: it does not import JAX where nothing imported it yet."""
    if "jax" not in sys.modules:
        return []
    try:
        from jax._src import xla_bridge  # deferred: only where JAX is loaded already (above)
    except ImportError:  # an internal JAX API: if it moves, say nothing rather than guess
        return []
    return sorted(getattr(xla_bridge, "_backends", None) or {})
