"""The export step (trusted side): the candidate's Python runs in an export child and nowhere
else. That child has no device and no inputs: it gets the input shapes and the profile's static
values, imports the candidate, traces ``workload`` and writes the serialized program(s) for the
target (``jax.export``). It is dead before anything is checked or timed; the timer child that
runs the artifact never imports candidate code (TRUST.md 1)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from .. import arrays
from .. import hardware as hw
from ..record import Outcome, trim
from ..sandbox.child import SandboxedChild
from ..sandbox.options import Limits, SandboxError, SandboxOptions
from .phases import _finish, _hello, _program_name, _Run, _send_job
from .prepare import _manifest_specs, _specs, _write_input
from .settings import MAX_ARTIFACT_BYTES, InfrastructureError

# the custom calls of Pallas GPU kernels (Triton, Mosaic GPU): outside jax.export's list of
# calls with a compatibility guarantee, which matters only for artifacts kept across JAX versions
GPU_KERNEL_CALLS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu", "mosaic_gpu_v2")
# the TPU generation a cpu-target candidate is judged for (its program is that TPU lowering)
SHARE_DEVICE_KIND = "TPU v6 lite"
# kernel sites one program may have on the cpu target (each is a file of its own)
MAX_KERNEL_SITES = 256


def target_for(platform: str, device_kind: str | None) -> dict:
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
    child = SandboxedChild(SandboxOptions(platform="cpu", role="export", limits=limits or Limits()))
    try:
        child.start()
    except SandboxError as exc:
        raise InfrastructureError(str(exc)) from None
    return child


def export_candidate(
    child: SandboxedChild,
    rec: dict,
    timeouts: dict,
    *,
    source: str,
    wl,
    profile: str,
    platform: str,
    device_kind,
    phase: str = "compile",
) -> dict:
    """Run the export child to its end: returns {"program": bytes, "kernels": [bytes] | None}
    (see :func:`target_for`). Each artifact is taken the moment the child says it is complete:
    read at once, checked against the size and digest the child gave for the bytes it wrote
    (a file changed after that is ``rejected``, ``artifact_tampered``), and never read again:
    the timer gets the trusted side's copies. The child is closed (every process of it dead)
    before this returns, whatever happens; a failure of the candidate's ends the evaluation with
    its outcome in the record (raises the harness's _Stop). ``phase``: what a timeout is called
    and which limit applies ("compile" for an evaluation: its import, trace and lowering happen
    here; "export" for the pre-check)."""
    phases = rec["phases"]
    try:
        t = time.monotonic()
        if child.hello_info is None:
            _hello(child, timeouts["startup"])
        phases["export_startup_s"] = round(time.monotonic() - t, 6)
        arrays.write_manifest(child.in_dir, _manifest_specs(wl, _specs(wl, profile)[0]), {})
        _write_input(child.in_dir, "candidate.py", source)
        _send_job(
            child,
            rec,
            timeouts,
            {"cmd": "job", "mode": "candidate", "name": _program_name(), "config": wl.config(profile)},
        )
        rec["phase"] = "compile"
        try:
            reply = _Run(child, timeouts, rec).phase(
                phase, {"cmd": "export_run", "target": target_for(platform, device_kind)}, "artifacts"
            )
        finally:
            phases["export_s"] = phases.pop(f"{phase}_s", None)
        program = _take(child, rec, reply.get("program"))
        kernels = reply.get("kernels")
        if kernels is not None:
            if not isinstance(kernels, list) or len(kernels) > MAX_KERNEL_SITES:
                _finish(rec, Outcome.REJECTED, "artifact_too_large", f"more than {MAX_KERNEL_SITES} kernel sites")
            kernels = [_take(child, rec, k) for k in kernels]
        rec["artifact_bytes"] = len(program)
        rec["artifact_digest"] = _digest(program)
        if kernels is not None:
            rec["kernel_artifacts"] = [{"bytes": len(k), "blake2b": _digest(k)} for k in kernels]
        return {"program": program, "kernels": kernels}
    finally:
        t = time.monotonic()
        child.close()
        rec["export_child_output"] = {
            "stdout": trim(child.stdout_tail(), 4000),
            "stderr": trim(child.stderr_tail(), 4000),
            "bytes": child.output_info(),
        }
        if not child.dead():
            raise InfrastructureError("the export child is still alive after close")
        phases["export_close_s"] = round(time.monotonic() - t, 6)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def _take(child: SandboxedChild, rec: dict, info) -> bytes:
    """One artifact the child says it wrote, read now, once (see :func:`export_candidate`)."""
    if not isinstance(info, dict) or not isinstance(info.get("file"), str):
        raise InfrastructureError(f"the export child named no artifact: {str(info)[:300]}")
    name = info["file"]
    if "/" in name or name.startswith("."):
        _finish(rec, Outcome.REJECTED, "artifact_unreadable", f"the export child named the artifact {name[:100]!r}")
    try:
        data = child.work.read(f"artifacts/{name}", MAX_ARTIFACT_BYTES)
    except OSError as exc:
        _finish(rec, Outcome.REJECTED, "artifact_too_large", f"the exported program could not be read: {exc}")
    if len(data) != info.get("bytes") or _digest(data) != info.get("blake2b"):
        _finish(
            rec,
            Outcome.REJECTED,
            "artifact_tampered",
            f"{name} changed after it was written ({len(data)} bytes read, {info.get('bytes')} written)",
        )
    return data
