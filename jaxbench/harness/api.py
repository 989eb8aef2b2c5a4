"""The harness's public API: evaluate a candidate, measure a baseline, lower for a platform,
probe the environment (the package docstring describes each call and how a run goes)."""

from __future__ import annotations

import threading
import time
from typing import Any

from .. import HARNESS_VERSION, arrays
from .. import hardware as hw
from ..record import CORRECT_OUTCOMES, Outcome, json_safe, new_record, trim
from ..sandbox import probe as sandbox_probe
from ..sandbox.child import SandboxedChild
from ..sandbox.options import Limits
from ..verdict import artifact as artifact_rules
from ..verdict import configurations, pallas_share
from ..workloads.base import CASE_SEP
from .export import export_candidate, new_export_child
from .phases import (
    _check_phase,
    _compile_phase,
    _hello,
    _load_phase,
    _new_child,
    _open_device,
    _program_name,
    _Run,
    _send_job,
    _start_job,
    _Stop,
    _timing_phase,
)
from .prepare import (
    _limits_for,
    _manifest_specs,
    _platform_hint,
    _Prepared,
    _set_counts,
    _specs,
    _target_for,
    _timeouts,
    _trusted_jax,
    _workload,
    _write_artifact_model,
    _write_input,
    reference_hlo_cost,
)
from .settings import DEFAULT_TIMEOUTS, MAX_ARTIFACT_BYTES, MAX_SOURCE_BYTES, InfrastructureError
from .speed import _speed_verdict

_BASELINES: dict = {}
_BASELINE_LOCK = threading.Lock()


def evaluate(
    workload,
    source: str,
    *,
    profile: str,
    hardware=None,
    require_pallas: bool = True,
    baseline: dict | None = None,
    timeouts: dict | None = None,
) -> dict:
    """Evaluate one candidate in fresh sandboxed children; returns an EvalRecord dict. A
    multi-configuration workload runs each configuration as its own case (``over_cases``)."""
    kw = dict(hardware=hardware, require_pallas=require_pallas, timeouts=timeouts, child=None)
    return over_cases(
        workload, profile, baseline, lambda case, base: _evaluate(workload, source, profile=case, baseline=base, **kw)
    )


def over_cases(workload, profile: str, baseline: dict | None, run_case) -> dict:
    """``run_case(case, baseline of the case or None)`` for every case of ``profile``, in order,
    stopping at the first configuration that is not correct; the records folded into one
    (``verdict.configurations.combine``). A one-configuration workload (or a case given
    directly) is one call, its record unchanged."""
    wl = _workload(workload)
    if CASE_SEP in profile or not wl.configuration_names(profile):
        return run_case(profile, baseline)
    cases = list(zip(wl.configuration_names(profile), wl.cases(profile)))
    bases = _case_baselines(baseline, wl, profile)
    done: list = []
    stop = False
    for name, case in cases:
        rec = None if stop else run_case(case, bases.get(case))
        done.append((name, case, rec))
        stop = stop or rec is None or rec.get("outcome") not in CORRECT_OUTCOMES
    out = configurations.combine(profile, done)
    out["phases"] = dict(out.get("phases") or {})
    out["phases"]["total_s"] = round(sum((r.get("phases") or {}).get("total_s") or 0 for _, _, r in done if r), 6)
    return json_safe(out)


def _case_baselines(baseline: dict | None, wl, profile: str) -> dict:
    """The per-case baselines of a multi-configuration baseline record (``measure_baseline``)."""
    if baseline is None:
        return {}
    _check_baseline(baseline, wl, profile, None)
    got = baseline.get("configurations") or {}
    want = list(wl.cases(profile))
    if sorted(got) != sorted(want):
        raise ValueError(f"baseline has configurations {sorted(got)}, this evaluation needs {want}")
    return got


def _evaluate(
    workload,
    source,
    *,
    profile,
    hardware,
    require_pallas,
    baseline,
    timeouts,
    child: SandboxedChild | None,
    exporter: SandboxedChild | None = None,
    closer=None,
) -> dict:
    """One evaluation in two children: ``exporter`` (an export child: the only process that
    runs the candidate's Python; closed, every process of it dead, before the timer starts) and
    ``child`` (the timer: deserializes the artifact and the baseline, is verified, checks and
    times them). Either may come warm from a pool; None: started here."""
    t0 = time.monotonic()
    _trusted_jax()
    wl = _workload(workload)
    if not isinstance(source, str):
        raise TypeError("source must be the candidate file's text (str)")
    if len(source.encode("utf-8", "replace")) > MAX_SOURCE_BYTES:
        raise ValueError(f"candidate source over {MAX_SOURCE_BYTES} bytes")
    wl.config(profile)  # KeyError for an unknown profile
    tmo = _timeouts(timeouts)
    if baseline is not None:
        _check_baseline(baseline, wl, profile, hardware)
    rec = new_record(workload=wl.id, workload_slug=wl.slug, profile=profile, require_pallas=bool(require_pallas))
    phases = rec["phases"]
    n_check, n_timing = _set_counts(wl, profile)
    phases["setup_s"] = round(time.monotonic() - t0, 6)
    platform = _platform_hint(hardware) if child is None else child.opt.platform
    owned = child is None
    if owned:
        t = time.monotonic()
        child = _new_child(platform, _limits_for(wl, profile, platform, n_check + n_timing))
        phases["startup_s"] = round(time.monotonic() - t, 6)
    assert child is not None  # made just above when not given
    rec["sandbox"] = dict(child.protections)
    if exporter is None:
        t = time.monotonic()
        exporter = new_export_child()
        phases["export_startup_s"] = round(time.monotonic() - t, 6)
    stopped = True
    try:
        # the guard's reference, the baseline measured alone in a clean child: before this
        # candidate's child opens the device (one device-holding process per device)
        alone = baseline or _cached_baseline(wl, profile, hardware, platform)
        t = time.monotonic()
        try:
            prep = _Prepared(wl, profile, n_check, n_timing)
        except Exception as exc:  # noqa: BLE001
            raise InfrastructureError(f"inputs/reference failed: {type(exc).__name__}: {exc}") from None
        phases["prepare_s"] = round(time.monotonic() - t, 6)
        try:
            if child.hello_info is None:
                t = time.monotonic()
                _hello(child, tmo["startup"])
                phases["startup_s"] = round(phases.get("startup_s", 0) + time.monotonic() - t, 6)
            assert child.hello_info is not None  # set by _hello
            hello = child.hello_info
            # known before the export child runs: a candidate stopped there is still recorded
            # with the versions and platform it was judged under
            rec.update(
                platform=child.opt.platform,
                hardware=hardware.slug if isinstance(hardware, hw.Target) else hardware,
                jax_version=hello.get("jax_version"),
                jaxlib_version=hello.get("jaxlib_version"),
                python_version=hello.get("python"),
            )
            if child.opt.platform != "cpu":
                # the accelerator's generation is what the candidate is lowered for: the timer
                # (no candidate code in it, ever) opens its device first and says which it is
                _open_device(child, phases, tmo["startup"])
            t = time.monotonic()
            artifacts = export_candidate(
                exporter,
                rec,
                tmo,
                source=source,
                wl=wl,
                profile=profile,
                platform=child.opt.platform,
                device_kind=_device_kind_for(hardware, child),
            )
            phases["export_total_s"] = round(time.monotonic() - t, 6)
            name, base_name = _start_job(
                child,
                rec,
                tmo,
                mode="candidate",
                artifacts=artifacts,
                wl=wl,
                profile=profile,
                hardware=hardware,
                manifest_writer=prep.write_manifest,
            )
            _load_phase(
                child,
                prep,
                rec,
                tmo,
                wl=wl,
                profile=profile,
                require_pallas=require_pallas,
                n_kernels=None if artifacts["kernels"] is None else len(artifacts["kernels"]),
            )
            _compile_phase(child, rec, tmo, mode="candidate")
            checked = _check_phase(child, prep, rec, tmo, mode="candidate", atol=wl.atol, rtol=wl.rtol)
            _timing_phase(
                child,
                prep,
                rec,
                tmo,
                wl=wl,
                profile=profile,
                mode="candidate",
                name=name,
                atol=wl.atol,
                rtol=wl.rtol,
                checked=checked,
                base_name=base_name,
            )
            stopped = False
        except _Stop:
            pass
        rec["seeds"] = prep.seeds_hex()  # recorded after the run
    finally:
        if not exporter.closed:
            exporter.close()  # a failure before the export: the candidate's child never ran code
        t = time.monotonic()
        if closer is None:
            child.close()
        rec["child_output"] = {
            "stdout": trim(child.stdout_tail(), 4000),
            "stderr": trim(child.stderr_tail(), 4000),
            "bytes": child.output_info(),
        }
        if closer is not None:
            closer(child)  # the warm pool closes it in its own thread
        phases["close_s"] = round(time.monotonic() - t, 6)
        phases["total_s"] = round(time.monotonic() - t0, 6)
    if not stopped:
        # after the candidate's child is closed: a re-measure opens the device in a new child
        cpus = child.protections.get("cpu_affinity")
        slug = child.target.slug
        _speed_verdict(
            rec, alone, lambda: measure_baseline(wl, profile=profile, hardware=slug, timeouts=timeouts, cpus=cpus)
        )
        phases["total_s"] = round(time.monotonic() - t0, 6)
    return json_safe(rec)


def _device_kind_for(hardware, child) -> str | None:
    """The device generation the candidate is exported for: the timer's device where it is open
    already, else the target's (a TPU kernel lowers per generation)."""
    info = child.hello_info or {}
    if info.get("device_kind"):
        return info["device_kind"]
    slug = hardware.slug if isinstance(hardware, hw.Target) else hardware
    return hw.device_kind_of(slug) if slug else None


def _check_baseline(b: dict, wl, profile, hardware):
    if not isinstance(b, dict) or b.get("kind") != "baseline":
        raise ValueError("baseline must be a record returned by measure_baseline()")
    want = {"workload": wl.id, "profile": profile, "harness_version": HARNESS_VERSION}
    if hardware is not None:
        want["hardware"] = hardware.slug if isinstance(hardware, hw.Target) else hardware
    for k, v in want.items():
        if b.get(k) != v:
            raise ValueError(f"baseline {k} is {b.get(k)!r}, this evaluation needs {v!r}")
    if not (isinstance(b.get("median_s"), (int, float)) and b["median_s"] > 0):
        raise ValueError("baseline has no positive median_s")


def _cached_baseline(wl, profile, hardware, platform):
    """The baseline alone for ``hardware`` (None: the hardware a child on ``platform`` detects)."""
    slug = hardware.slug if isinstance(hardware, hw.Target) else hardware
    key = (wl.id, wl.reference, profile, slug or f"detected:{platform}", HARNESS_VERSION)
    with _BASELINE_LOCK:
        if key not in _BASELINES:
            _BASELINES[key] = measure_baseline(wl, profile=profile, hardware=slug)
        return _BASELINES[key]


def measure_baseline(
    workload, *, profile: str, hardware=None, timeouts: dict | None = None, cpus: list | None = None
) -> dict:
    """Time the workload's XLA baseline alone, in a baseline child (the exported program that
    is timed beside every candidate), with the same phases and trace parsing. Returns a
    BaselineRecord dict: the workload page's reference time; verdicts use the side-by-side
    re-timing. A multi-configuration workload's profile: every case measured, the record's
    ``configurations`` holds each case's record and its median is their geometric mean."""
    wl = _workload(workload)
    if CASE_SEP not in profile and wl.configuration_names(profile):
        each = {
            case: measure_baseline(wl, profile=case, hardware=hardware, timeouts=timeouts, cpus=cpus)
            for case in wl.cases(profile)
        }
        first = next(iter(each.values()))
        timing = configurations.geomean_timing(list(each.values()), "timing")
        assert timing is not None  # every case's baseline has a positive median or raised
        return {
            **{k: first[k] for k in ("kind", "workload", "hardware", "platform", "device_kind", "jax_version")},
            **{k: first[k] for k in ("jaxlib_version", "harness_version", "sandbox")},
            "profile": profile,
            "timing": timing,
            "median_s": timing["median_s"],
            "max_abs_err": max((r.get("max_abs_err") or 0.0) for r in each.values()),
            "errors": None,
            "seeds": {c: r["seeds"] for c, r in each.items()},
            "phases": {"total_s": round(sum(r["phases"].get("total_s") or 0 for r in each.values()), 6)},
            "measured_at": time.time(),
            "configurations": each,
        }
    t0 = time.monotonic()
    _trusted_jax()
    wl.config(profile)
    tmo = _timeouts(timeouts)
    n_check, n_timing = _set_counts(wl, profile)
    platform = _platform_hint(hardware)
    limits = _limits_for(wl, profile, platform, n_check + n_timing)
    if cpus:
        limits.cpus = list(cpus)
    child = _new_child(platform, limits)
    rec = new_record(workload=wl.id, workload_slug=wl.slug, profile=profile, require_pallas=False)
    try:
        prep = _Prepared(wl, profile, n_check, n_timing)
        try:
            name, _ = _start_job(
                child,
                rec,
                tmo,
                mode="baseline",
                artifacts=None,
                wl=wl,
                profile=profile,
                hardware=hardware,
                manifest_writer=prep.write_manifest,
            )
            _compile_phase(child, rec, tmo, mode="baseline")
            _check_phase(child, prep, rec, tmo, mode="baseline", atol=wl.atol, rtol=wl.rtol)
            _timing_phase(
                child, prep, rec, tmo, wl=wl, profile=profile, mode="baseline", name=name, atol=wl.atol, rtol=wl.rtol
            )
        except _Stop:
            raise InfrastructureError(
                f"the baseline failed: {rec['outcome']} "
                f"({rec['error_category']}): {rec['message']}\n"
                f"{child.stderr_tail()[-2000:]}"
            ) from None
    finally:
        child.close()
    rec["phases"]["total_s"] = round(time.monotonic() - t0, 6)
    return {
        "kind": "baseline",
        "workload": wl.id,
        "profile": profile,
        "hardware": rec["hardware"],
        "platform": rec["platform"],
        "device_kind": rec["device_kind"],
        "harness_version": HARNESS_VERSION,
        "jax_version": rec["jax_version"],
        "jaxlib_version": rec["jaxlib_version"],
        "timing": rec["timing"],
        "median_s": rec["timing"]["median_s"],
        "max_abs_err": rec["max_abs_err"],
        "errors": rec.get("errors"),
        "seeds": prep.seeds_hex(),
        "sandbox": rec["sandbox"] or dict(child.protections),
        "phases": rec["phases"],
        "measured_at": time.time(),
    }


def lower_for_platform(
    workload,
    source: str,
    platform: str = "tpu",
    profile: str = "full",
    timeouts: dict | None = None,
    require_pallas: bool = False,
) -> dict:
    """The pre-check: export the candidate for ``platform`` at ``profile``'s shapes without
    running it (``jax.export`` with ShapeDtypeStructs, on this CPU host, in a sandboxed
    child). Catches Pallas TPU tiling and API errors. Measures the share of the workload's
    FLOPs outside Pallas kernels at these shapes (``pallas_share``); with ``require_pallas``
    a share above the threshold is ``rejected`` (work_outside_pallas). Returns a LowerRecord
    dict. A multi-configuration workload: each case in turn, the first that fails decides."""
    wl = _workload(workload)
    if CASE_SEP not in profile and wl.configuration_names(profile):
        outs = []
        for case in wl.cases(profile):
            outs.append(lower_for_platform(wl, source, platform, case, timeouts, require_pallas))
            if not outs[-1]["ok"]:
                break
        out = dict(outs[-1], profile=profile)
        out["configurations"] = [
            {k: o.get(k) for k in ("profile", "ok", "outcome", "error_category", "message", "duration_s")} for o in outs
        ]
        if not out["ok"]:
            out["message"] = f"configuration {outs[-1]['profile']}: {out['message']}"
        out["duration_s"] = round(sum(o["duration_s"] for o in outs), 6)
        return out
    t0 = time.monotonic()
    _trusted_jax()
    wl.config(profile)
    tmo = _timeouts(timeouts)
    out = {
        "kind": "lowering",
        "ok": False,
        "outcome": None,
        "error_category": None,
        "message": "",
        "workload": wl.id,
        "profile": profile,
        "platform": platform,
        "has_pallas_call": None,
        "host_callbacks": [],
        "pallas_share": None,
        "duration_s": 0.0,
        "harness_version": HARNESS_VERSION,
        "jax_version": None,
        "sandbox": {},
        "warnings": [],
    }
    rec: dict[str, Any] = {"phases": {}, "notes": []}  # what _Run writes; its outcome is copied into ``out``
    exporter = new_export_child()
    out["sandbox"] = dict(exporter.protections)
    t = time.monotonic()
    try:
        artifacts = export_candidate(
            exporter,
            rec,
            tmo,
            source=source,
            wl=wl,
            profile=profile,
            platform=platform,
            device_kind=None,
            phase="export",
        )
    except _Stop:
        out.update(outcome=rec["outcome"], error_category=rec["error_category"], message=rec["message"])
    else:
        out["jax_version"] = (exporter.hello_info or {}).get("jax_version")
        # read back in a child that never ran the candidate's code (no device opened)
        reader = _new_child("cpu", Limits())
        try:
            facts = _describe_artifact(reader, rec, tmo, wl, profile, artifacts["program"])
        finally:
            reader.close()
        share = pallas_share.assess_artifact(
            facts,
            reference_hlo_cost(wl, profile, platform)["outside_flops"],
            require_pallas=require_pallas,
            threshold=pallas_share.threshold_for(wl.id),
        )
        out.update(
            has_pallas_call=bool(share.get("kernels_unconditional")),
            host_callbacks=list(facts.get("host_callbacks") or []),
            pallas_share=share,
            artifact=artifact_rules.summary(facts),
        )
        specs, out_leaves = _specs(wl, profile)
        # the pre-check asks whether the program lowers: an output of the right shape in another
        # dtype is said, and left to the evaluation to judge (public files return float32 where
        # the workload's answer is bfloat16: jaxbench/kernels/experts/README.md)
        relaxed, dtype_notes = artifact_rules.output_dtype_differences(facts.get("out_avals"), out_leaves)
        out["warnings"] = dtype_notes
        bad = artifact_rules.verify(facts, specs, relaxed, hw.export_platform(platform))
        if bad:
            out.update(outcome=Outcome.REJECTED, error_category=bad[0], message=bad[1])
        elif not share["ok"]:
            out.update(
                outcome=Outcome.REJECTED,
                error_category=share.get("category") or pallas_share.CATEGORY,
                message=trim(share["message"]),
            )
        else:
            out.update(
                ok=True, message=f"lowers for {platform} at {profile} shapes" + "".join("; " + n for n in dtype_notes)
            )
    out["lower_s"] = round(time.monotonic() - t, 6)
    out["duration_s"] = round(time.monotonic() - t0, 6)
    return out


def _describe_artifact(reader, rec, tmo, wl, profile, data: bytes) -> dict:
    """The facts of an exported program, read in ``reader`` (a timer-role child that never ran
    candidate code and opens no device)."""
    _hello(reader, tmo["startup"])
    arrays.write_manifest(reader.in_dir, _manifest_specs(wl, _specs(wl, profile)[0]), {})
    _write_input(reader.in_dir, "candidate.jaxexport", data)
    _write_artifact_model(reader.in_dir)
    _send_job(reader, rec, tmo, {"cmd": "job", "mode": "candidate", "name": _program_name()})
    try:
        reply = _Run(reader, tmo, rec).phase(
            "load",
            {"cmd": "load", "artifact": "candidate.jaxexport", "max_bytes": MAX_ARTIFACT_BYTES},
            "loaded",
            timeout_key="export",
        )
    except _Stop:
        return {"error": rec.get("message") or "the artifact could not be read"}
    return reply.get("facts") or {"error": "no facts"}


def probe_environment(platform: str | None = None) -> dict:
    """What ``check-env`` shows: the hardware a child sees (from its hello, before any
    candidate code), the profile that hardware runs, versions, interpret mode, and the sandbox
    protections active for such a child."""
    platform = platform or _platform_hint(None)
    child = _new_child(platform, Limits())
    try:
        _hello(child, DEFAULT_TIMEOUTS["startup"])
        _open_device(child, {}, DEFAULT_TIMEOUTS["startup"])  # on an exclusive device: waits for its lock
        hello = child.hello_info
        assert hello is not None  # set by _hello
        target = _target_for(None, hello)
        prot = dict(child.protections)
    finally:
        child.close()
    prot.update(sandbox_probe.machine_report(platform))
    return {
        "hardware": target.slug,
        "platform": hello["platform"],
        "device_kind": hello.get("device_kind"),
        "profile": target.profile,
        "jax_version": hello.get("jax_version"),
        "jaxlib_version": hello.get("jaxlib_version"),
        "harness_version": HARNESS_VERSION,
        "python_version": hello.get("python"),
        "interpret_mode": hello["platform"] == "cpu" and bool(hello.get("pallas_tpu")),
        "sandbox": prot,
    }


def available_protections(platform: str | None = None) -> dict:
    """The sandbox protections this machine offers (see sandbox.probe.available_protections)."""
    return sandbox_probe.available_protections(platform or _platform_hint(None))
