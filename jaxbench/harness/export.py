"""The export step's terms (trusted side): the candidate's Python runs in an export child and
nowhere else. That child has no device and no inputs: it gets the input shapes and the profile's
static values, imports the candidate, traces ``workload`` once and writes what
:func:`target_for` asks (``jax.export``). ``run.Run.export`` drives it and takes its files; it is
dead before anything is checked or timed, and the timer child that runs the artifact never
imports candidate code (TRUST.md 1)."""

from __future__ import annotations

from typing import Any

from .. import hardware as hw
from ..sandbox import pair
from ..sandbox.child import SandboxedChild
from ..sandbox.options import Limits, SandboxError
from .settings import InfrastructureError

# the custom calls of Pallas GPU kernels (Triton, Mosaic GPU): outside jax.export's list of
# calls with a compatibility guarantee, which matters only for artifacts kept across JAX versions
GPU_KERNEL_CALLS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu", "mosaic_gpu_v2")
# the TPU generation a cpu-target candidate is judged for (its program is that TPU lowering)
SHARE_DEVICE_KIND = "TPU v6 lite"
# kernel sites one program may have on the cpu target (each is a file of its own)
MAX_KERNEL_SITES = 256


def target_for(platform: str, device_kind: str | None) -> dict[str, Any]:
    """What the export child makes of its one trace for a run on ``platform``: the judged
    program, lowered natively for ``export_platform`` (TPU for a TPU and for the cpu target,
    CUDA for a GPU); with ``kernels`` (the cpu target) also each Pallas kernel alone through
    JAX's generic interpreter, from which the timer builds the cpu twin
    (``jaxbench/profiling/cpu_twin.py``). On TPU and GPU the judged program is the program that
    runs, byte for byte."""
    if platform == "cpu":
        return {
            "trace_platform": "tpu",
            "export_platform": "tpu",
            "device_kind": SHARE_DEVICE_KIND,
            "kernels": True,
            "max_kernels": MAX_KERNEL_SITES,
        }
    target: dict[str, Any] = {
        "trace_platform": platform,
        "export_platform": hw.export_platform(platform),
        "device_kind": device_kind,
        "kernels": False,
    }
    if platform == "gpu":
        target["unstable_calls"] = list(GPU_KERNEL_CALLS)
    return target


def new_export_child(limits: Limits | None = None) -> SandboxedChild:
    try:
        return pair.export_child(limits)
    except SandboxError as exc:
        raise InfrastructureError(str(exc)) from None
