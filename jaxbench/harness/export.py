"""The export step (trusted side): the candidate's Python runs in an export child and nowhere
else. That child has no device and no inputs: it gets the input shapes and the profile's static
values, imports the candidate, traces ``workload`` and writes the serialized program(s) for the
target (``jax.export``). It is dead before anything is checked or timed; the timer child that
runs the artifact never imports candidate code (TRUST.md 1)."""

from __future__ import annotations

import time
from typing import Any

from .. import arrays
from .. import hardware as hw
from ..record import Outcome, trim
from ..sandbox.child import SandboxedChild
from ..sandbox.options import Limits, SandboxError, SandboxOptions
from ..verdict import rules as verdict
from .phases import _finish, _hello, _program_name, _Run, _send_job
from .prepare import _manifest_specs, _specs, _write_input
from .settings import MAX_ARTIFACT_BYTES, InfrastructureError

# the custom calls of Pallas GPU kernels (Triton, Mosaic GPU): outside jax.export's list of
# calls with a compatibility guarantee, which matters only for artifacts kept across JAX versions
GPU_KERNEL_CALLS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu", "mosaic_gpu_v2")
# the TPU generation a cpu-target candidate is exported for, for the Pallas-share count
SHARE_DEVICE_KIND = "TPU v6 lite"


def targets_for(platform: str, device_kind: str | None) -> list[dict]:
    """What the export child writes for a run on ``platform``. ``run``: the program the timer
    child checks and times: on TPU and GPU the native lowering (Mosaic / Triton custom calls);
    on the cpu target the Pallas kernels lowered through JAX's generic Pallas interpreter (plain
    HLO: no callbacks, no custom calls). ``share`` (cpu target only): the same candidate exported
    for a TPU, whose kernel custom calls tell the work inside Pallas from the work outside."""
    run: dict[str, Any] = {
        "name": "run",
        "platform": platform,
        "export_platform": hw.export_platform(platform),
        "device_kind": device_kind,
    }
    if platform == "gpu":
        run["unstable_calls"] = list(GPU_KERNEL_CALLS)
    if platform != "cpu":
        return [run]
    run.update(pallas="generic", device_kind=SHARE_DEVICE_KIND)
    share = {
        "name": "share",
        "platform": "tpu",
        "export_platform": "tpu",
        "device_kind": SHARE_DEVICE_KIND,
    }
    return [run, share]


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
    only_run: bool = False,
    phase: str = "compile",
) -> dict:
    """Run the export child to its end: returns {"run": bytes, "share": bytes | None,
    "share_error": message | None}. The child is closed (every process of it dead) before this
    returns, whatever happens; a failure of the candidate's ends the evaluation with its
    outcome in the record (raises the harness's _Stop). ``phase``: what a timeout is called and
    which limit applies ("compile" for an evaluation: its import, trace and lowering happen here;
    "export" for the pre-check)."""
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
                phase,
                {"cmd": "export_run", "targets": targets_for(platform, device_kind)[: 1 if only_run else None]},
                "artifacts",
            )
        finally:
            phases["export_s"] = phases.pop(f"{phase}_s", None)
        out: dict = {"run": None, "share": None, "share_error": None}
        files = reply.get("files") or {}
        run_error = None
        for key in ("run", "share"):
            info = files.get(key)
            if not isinstance(info, dict):
                continue
            if "error" in info:
                err = info["error"] if isinstance(info["error"], dict) else {}
                if key == "run":
                    run_error = err
                else:
                    out["share_error"] = str(err.get("message", ""))[:2000]
                continue
            try:
                out[key] = child.work.read(f"artifacts/{key}.jaxexport", MAX_ARTIFACT_BYTES)
            except OSError as exc:
                if key == "run":
                    _finish(
                        rec, Outcome.REJECTED, "artifact_too_large", f"the exported program could not be read: {exc}"
                    )
                out["share_error"] = f"the TPU export could not be read: {exc}"
        if run_error is not None:
            outcome, category, message = verdict.classify_child_error(run_error, "compile")
            if platform == "cpu" and out["share"] is not None:
                # it lowers for a TPU, but JAX's generic Pallas interpreter cannot run it
                outcome, category = Outcome.COMPILE_ERROR, "cpu_unsupported"
                message = "cannot run on the cpu target: " + message
            _finish(rec, outcome, category, message)
        if out["run"] is None:
            raise InfrastructureError(f"the export child wrote no program: {str(reply)[:500]}")
        rec["artifact_bytes"] = len(out["run"])
        return out
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
