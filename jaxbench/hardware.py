"""Hardware targets: detection from ``jax.devices()`` and the figures charts need.

Each target names the size profile it runs (DESIGN.md): accelerators run ``full``, the CPU runs
``small``. A chip's peaks (bf16 dense FLOP/s and HBM bandwidth, each with its source) are in one
table, :data:`PEAKS`; a target's ``peak_flops``/``peak_bandwidth`` are read from it, and feed the
roofline (``metrics/roofline.py``: the "% of limit" and its review hold), the roofline charts and
the physical-floor plausibility gate.
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
class Peaks:
    """A chip's peak rates and where they come from."""

    flops: float  # bf16 dense (no sparsity) FLOP/s
    bandwidth: float  # HBM bytes/s
    source: str  # where both figures come from, for a reader to check


# TPU peaks are JAX's own TPU info: ``jax.experimental.pallas.tpu.get_tpu_info_for_chip(chip,
# cores)``, per TensorCore, times the cores one JAX device holds (v4 and v5p run as megacore: both
# cores in one device). JAX gives the figures, not just the generation, but only by importing JAX,
# which the portal and the CLI's list/check never do: so they are copied here (jax 0.10.2), and
# tests/jaxbench/test_roofline.py fails the day the installed JAX says otherwise. JAX's v5p HBM
# figure (2.46 TB/s) is below Google's page (2,765 GB/s): see DESIGN.md, "The roofline".
TPU_CHIPS = {"tpu-v4": ("v4", 2), "tpu-v5e": ("v5e", 1), "tpu-v5p": ("v5p", 2), "tpu-v6e": ("v6e", 1)}


def _jax_tpu(slug: str, flops: float, bandwidth: float) -> Peaks:
    chip, cores = TPU_CHIPS[slug]
    return Peaks(
        flops,
        bandwidth,
        f"JAX's TPU info: jax.experimental.pallas.tpu.get_tpu_info_for_chip(ChipVersion('{chip}'), {cores}), "
        f"bf16_ops_per_second and mem_bw_bytes_per_second x {cores} core(s), jax 0.10.2 "
        "(https://docs.jax.dev/en/latest/pallas/tpu/hardware.html)",
    )


# One entry per chip with sourced peaks; nothing else has a roofline. GPU figures are NVIDIA's
# datasheets: dense bf16 is half the "with sparsity" figure they print. Where JAX gives several
# boards one name (H100 SXM, PCIe and NVL are all "gpu-h100"), each figure is the highest of those
# boards, so a fraction of the limit is never overstated on any of them. The cpu target has no
# entry: no source gives the peaks of whatever host runs it, and none is invented.
PEAKS: dict[str, Peaks] = {
    "tpu-v6e": _jax_tpu("tpu-v6e", 920e12, 1.64e12),
    "tpu-v5e": _jax_tpu("tpu-v5e", 197e12, 0.82e12),
    "tpu-v5p": _jax_tpu("tpu-v5p", 459e12, 2.46e12),
    "tpu-v4": _jax_tpu("tpu-v4", 275e12, 1.23e12),
    "gpu-h200": Peaks(
        989.5e12,
        4.8e12,
        "NVIDIA H200 datasheet: H200 SXM BF16 Tensor Core 1,979 TFLOPS with sparsity, GPU memory "
        "bandwidth 4.8 TB/s (H200 NVL: 1,671 TFLOPS, 4.8 TB/s) (https://www.nvidia.com/en-us/data-center/h200/)",
    ),
    "gpu-h100": Peaks(
        989.5e12,
        3.9e12,
        "NVIDIA H100 datasheet: H100 SXM BF16 Tensor Core 1,979 TFLOPS with sparsity, 3.35 TB/s; H100 NVL "
        "1,671 TFLOPS, 3.9 TB/s; H100 PCIe 1,513 TFLOPS, 2 TB/s: the highest of each "
        "(https://www.nvidia.com/en-us/data-center/h100/)",
    ),
    "gpu-a100": Peaks(
        312e12,
        2.039e12,
        "NVIDIA A100 datasheet: BF16 Tensor Core 312 TFLOPS dense; GPU memory bandwidth 2,039 GB/s (80GB SXM, "
        "the highest A100) (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)",
    ),
    "gpu-l4": Peaks(
        121e12,
        300e9,
        "NVIDIA L4 datasheet: BF16 Tensor Core 242 TFLOPS with sparsity, GPU memory bandwidth 300 GB/s "
        "(https://www.nvidia.com/en-us/data-center/l4/)",
    ),
}


def peaks_of(slug: str) -> Peaks | None:
    """The sourced peaks of a target (:data:`PEAKS`); None where they are unknown (cpu, an
    accelerator not in the table): then there is no roofline, and no figure is shown."""
    return PEAKS.get(slug)


@dataclasses.dataclass(frozen=True)
class Target:
    slug: str
    name: str
    platform: str  # the JAX platform: "cpu", "tpu" or "gpu"
    profile: str  # "full" or "small"
    peak_flops: float  # bf16 FLOP/s (PEAKS; the cpu target's are not peaks: see below)
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


def _accelerator(slug: str, name: str, platform: str) -> Target:
    p = PEAKS[slug]
    return Target(slug, name, platform, "full", p.flops, p.bandwidth)


# Not peaks: a generous bound the physical-floor gate divides by (with its 2% slack it assumes no
# host does more than 5 TFLOP/s or 1 TB/s), and that the cpu roofline chart draws. The cpu target
# has no PEAKS entry, so no "% of limit" and no hold on it.
CPU_FLOOR_RATES = (1.0e11, 2.0e10)

TARGETS = {
    t.slug: t
    for t in (
        Target(
            "cpu", "CPU (XLA CPU client, TPU kernels through the Pallas interpreter)", "cpu", "small", *CPU_FLOOR_RATES
        ),
        _accelerator("tpu-v6e", "TPU v6e (Trillium)", "tpu"),
        _accelerator("tpu-v5e", "TPU v5e", "tpu"),
        _accelerator("tpu-v5p", "TPU v5p", "tpu"),
        _accelerator("tpu-v4", "TPU v4", "tpu"),
        _accelerator("gpu-h200", "NVIDIA H200", "gpu"),
        _accelerator("gpu-h100", "NVIDIA H100", "gpu"),
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
        m = re.search(r"\b([a-z]\d{1,4}[a-z]?)\b", kind.replace("nvidia", ""))
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
    """The target this process runs on, from ``jax.devices()``; an accelerator without a target
    gets its PEAKS entry's peaks (an A100, an L4), else zero peaks (its roofline is then
    unknown, not invented)."""
    import jax  # deferred: JAX loads only when this runs, not when the module is imported

    dev = jax.devices()[0]
    slug = slug_for_device_kind(dev.platform, getattr(dev, "device_kind", ""))
    if slug in TARGETS:
        return TARGETS[slug]
    p = peaks_of(slug)
    return Target(
        slug, getattr(dev, "device_kind", slug), dev.platform, "full", *((p.flops, p.bandwidth) if p else (0.0, 0.0))
    )


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
