"""The harness's public API: evaluate a candidate, measure a baseline, lower for a platform,
probe the environment (the package docstring describes each call and how a run goes). Each call
is a short script of :class:`run.Run` phases returning a typed record."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .. import HARNESS_VERSION
from .. import hardware as hw
from ..record import CORRECT_OUTCOMES, BaselineRecord, EvalRecord, LowerRecord, Outcome, json_safe, trim
from ..sandbox import pair
from ..sandbox import probe as sandbox_probe
from ..sandbox.child import SandboxedChild
from ..sandbox.options import Limits
from ..sandbox.pair import platform_hint
from ..verdict import artifact as artifact_rules
from ..verdict import configurations, pallas_share
from ..workloads.base import CASE_SEP, Workload
from . import baseline_cache as disk_cache
from .export import new_export_child
from .outcomes import Stop
from .prepare import (
    checked_jax,
    limits_for,
    missing_packages,
    reference_hlo_cost,
    require_platform,
    resolve_timeouts,
    set_counts,
    specs_of,
    target_of,
    workload_of,
)
from .run import Run, child_output, greet, new_timer_child, open_device
from .settings import (
    DEFAULT_TIMEOUTS,
    LOAD_RETRY_WAITS_S,
    MAX_SOURCE_BYTES,
    ChildKilled,
    InfrastructureError,
    MeasurementUntrusted,
)
from .speed import speed_verdict

Record = dict[str, Any]
CaseRunner = Callable[[str, Record | None], Record]
T = TypeVar("T")

_BASELINES: dict[tuple[Any, ...], Record] = {}
_BASELINE_LOCK = threading.Lock()
# where an evaluation given no baseline finds its baseline alone (``_cached_baseline``)
BASELINE_CACHES = ("memory", "disk", "fresh")


def evaluate(
    workload: Any,
    source: str,
    *,
    profile: str,
    hardware: Any = None,
    require_pallas: bool = True,
    baseline: Record | None = None,
    timeouts: dict[str, float] | None = None,
    baseline_cache: str = "memory",
    started: tuple[SandboxedChild, SandboxedChild] | None = None,
) -> EvalRecord:
    """Evaluate one candidate in fresh sandboxed children; returns an EvalRecord dict. A
    multi-configuration workload runs each configuration as its own case (``over_cases``).
    ``baseline_cache``: where the baseline alone comes from when ``baseline`` is None (see
    ``_cached_baseline``): "memory" (this process), "disk" (also the command line's disk cache)
    or "fresh" (measured now, and stored on disk). ``started``: a (timer, export child) pair
    already started for this call (``sandbox.pair.start_pair``: the command line starts it
    before it imports JAX), taken by the first case where its platform and limits serve it;
    closed here whatever happens."""
    if baseline_cache not in BASELINE_CACHES:
        raise ValueError(f"baseline_cache must be one of {BASELINE_CACHES}")
    spare = [started] if started else []

    def case_fn(workload: Any, source: str, *, profile: str, hardware: Any, **kw: Any) -> EvalRecord:
        timer = exporter = None
        if spare:
            timer, exporter = spare.pop()
            wl = workload_of(workload)
            need = limits_for(wl, profile, timer.opt.platform, sum(set_counts(wl, profile)))
            if timer.opt.platform != platform_hint(hardware) or not pair.covers(timer.opt.limits, need):
                timer.close()
                exporter.close()
                timer = exporter = None
        return evaluate_case(
            workload,
            source,
            profile=profile,
            hardware=hardware,
            child=timer,
            exporter=exporter,
            baseline_cache=baseline_cache,
            **kw,
        )

    kw = {"hardware": hardware, "require_pallas": require_pallas, "timeouts": timeouts}
    try:
        return evaluate_with(case_fn, workload, source, profile=profile, baseline=baseline, **kw)
    finally:
        for children in spare:
            for c in children:
                c.close()


def evaluate_with(
    case_fn: Callable[..., EvalRecord],
    workload: Any,
    source: str,
    *,
    profile: str,
    baseline: Record | None,
    hardware: Any,
    require_pallas: bool,
    timeouts: dict[str, float] | None,
) -> EvalRecord:
    """``evaluate`` with ``case_fn`` (``evaluate_case``'s arguments) running each case: fresh
    children here, a warm pair in ``WarmPool.evaluate``. A case whose measurement the machine's
    load spoiled (MeasurementUntrusted) is timed again on fresh children after a pause, each
    reason kept in ``load_retries``; past LOAD_RETRY_WAITS_S the error goes to the caller (the
    worker retries the message later)."""
    require_platform(workload_of(workload), platform_hint(hardware))

    def one(case: str, base: Record | None) -> Record:
        kw = {"hardware": hardware, "require_pallas": require_pallas, "timeouts": timeouts}
        rec, reasons = retried_while_untrusted(
            lambda: dict(case_fn(workload, source, profile=case, baseline=base, **kw))
        )
        rec["load_retries"] = reasons
        return rec

    return cast(EvalRecord, over_cases(workload, profile, baseline, one))


def retried_while_untrusted(measure: Callable[[], T]) -> tuple[T, list[str]]:
    """(``measure()``, the reasons of the attempts the machine's load spoiled): each
    MeasurementUntrusted is timed again, ``measure`` making fresh children, after the pauses of
    LOAD_RETRY_WAITS_S; past them the error goes to the caller with the attempts counted."""
    reasons: list[str] = []
    for wait in (*LOAD_RETRY_WAITS_S, None):
        try:
            return measure(), reasons
        except MeasurementUntrusted as exc:
            reasons.append(str(exc)[:500])
            if wait is None:
                raise MeasurementUntrusted(f"{exc} ({len(reasons)} attempts)") from None
            time.sleep(wait)
    raise AssertionError("unreachable")  # the last attempt returns or raises


def over_cases(workload: Any, profile: str, baseline: Record | None, run_case: CaseRunner) -> Record:
    """``run_case(case, baseline of the case or None)`` for every case of ``profile``, in order,
    stopping at the first configuration that is not correct; the records folded into one
    (``verdict.configurations.combine``). A one-configuration workload (or a case given
    directly) is one call, its record unchanged."""
    wl = workload_of(workload)
    if CASE_SEP in profile or not wl.configuration_names(profile):
        return run_case(profile, baseline)
    cases = list(zip(wl.configuration_names(profile), wl.cases(profile)))
    bases = _case_baselines(baseline, wl, profile)
    done: list[tuple[str, str, Record | None]] = []
    stop = False
    for name, case in cases:
        rec = None if stop else run_case(case, bases.get(case))
        done.append((name, case, rec))
        stop = stop or rec is None or rec.get("outcome") not in CORRECT_OUTCOMES
    out = configurations.combine(profile, done)
    out["phases"] = dict(out.get("phases") or {})
    out["phases"]["total_s"] = round(sum((r.get("phases") or {}).get("total_s") or 0 for _, _, r in done if r), 6)
    return cast(Record, json_safe(out))


def _case_baselines(baseline: Record | None, wl: Workload, profile: str) -> dict[str, Record]:
    """The per-case baselines of a multi-configuration baseline record (``measure_baseline``)."""
    if baseline is None:
        return {}
    _check_baseline(baseline, wl, profile, None)
    got = baseline.get("configurations") or {}
    want = list(wl.cases(profile))
    if sorted(got) != sorted(want):
        raise ValueError(f"baseline has configurations {sorted(got)}, this evaluation needs {want}")
    return cast(dict[str, Record], got)


def evaluate_case(
    workload: Any,
    source: str,
    *,
    profile: str,
    hardware: Any,
    require_pallas: bool,
    baseline: Record | None,
    timeouts: dict[str, float] | None,
    child: SandboxedChild | None = None,
    exporter: SandboxedChild | None = None,
    closer: Callable[[SandboxedChild], None] | None = None,
    baseline_cache: str = "memory",
) -> EvalRecord:
    """One case of one evaluation in two children: ``exporter`` (an export child: the only
    process that runs the candidate's Python; closed, every process of it dead, before the
    timer starts) and ``child`` (the timer: deserializes the artifact and the baseline, is
    verified, checks and times them). Either may come warm from a pool; None: started here.
    ``closer``: who closes the timer (the warm pool, in its own thread). ``baseline_cache``:
    as ``evaluate``'s."""
    t0 = time.monotonic()
    checked_jax()
    wl = workload_of(workload)
    if not isinstance(source, str):
        raise TypeError("source must be the candidate file's text (str)")
    if len(source.encode("utf-8", "replace")) > MAX_SOURCE_BYTES:
        raise ValueError(f"candidate source over {MAX_SOURCE_BYTES} bytes")
    wl.config(profile)  # KeyError for an unknown profile
    tmo = resolve_timeouts(timeouts)
    if baseline is not None:
        _check_baseline(baseline, wl, profile, hardware)
    n_check, n_timing = set_counts(wl, profile)
    t = time.monotonic()
    platform = platform_hint(hardware) if child is None else child.opt.platform
    timer = child or new_timer_child(platform, limits_for(wl, profile, platform, n_check + n_timing))
    run = Run(
        wl, profile, mode="candidate", timeouts=tmo, timer=timer, hardware=hardware, require_pallas=require_pallas
    )
    run.phases["setup_s"] = round(t - t0, 6)
    if child is None:
        run.phases["startup_s"] = round(time.monotonic() - t, 6)
    if exporter is None:
        t = time.monotonic()
        exporter = new_export_child()
        run.phases["export_startup_s"] = round(time.monotonic() - t, 6)
    run.exporter = exporter
    stopped = True
    killed: ChildKilled | None = None
    try:
        # the guard's reference, the baseline measured alone in a clean child: before this
        # candidate's timer opens the device (one device-holding process per device)
        alone = baseline or _cached_baseline(wl, profile, hardware, platform, baseline_cache)
        run.prepare(n_check, n_timing)
        try:
            run.start_timer()
            if timer.opt.platform != "cpu":
                # the accelerator's generation is what the candidate is lowered for: the timer
                # (no candidate code in it, ever) opens its device first and says which it is
                run.open_device()
            # the timer compiles the baseline while the candidate exports where its device is open
            # already (an accelerator's, above; the cpu's); a device still closed (the simulated
            # exclusive cpu) is taken only after the export, as before
            beside = not (timer.hello_info or {}).get("lazy_device")
            if beside:
                run.start_job(wait=False)
            t = time.monotonic()
            run.export(source, platform=timer.opt.platform, device_kind=_device_kind_for(hardware, timer))
            run.phases["export_total_s"] = round(time.monotonic() - t, 6)
            if not beside:
                run.start_job(wait=False)
            run.load(require_pallas)
            run.compile()
            run.check()
            run.time()
            stopped = False
        except Stop:
            pass
    except ChildKilled as exc:
        killed = exc  # raised below, with the record the children's close completes
    finally:
        if run.prep is not None:
            run.rec["seeds"] = run.prep.seeds_hex()  # recorded after the run (or the death)
        if not exporter.closed:
            exporter.close()  # a failure before the export: the candidate's child never ran code
        t = time.monotonic()
        if closer is None:
            timer.close()
        run.rec["child_output"] = child_output(timer)
        if closer is not None:
            closer(timer)  # the warm pool closes it in its own thread
        run.phases["close_s"] = round(time.monotonic() - t, 6)
        run.phases["total_s"] = round(time.monotonic() - t0, 6)
    if killed is not None:
        killed.record = json_safe(run.rec)
        raise killed
    if not stopped:
        # after the candidate's children are closed: a re-measure opens the device in a new child
        cpus = timer.protections.get("cpu_affinity")
        slug = timer.target.slug

        def remeasure() -> Record:
            return dict(measure_baseline(wl, profile=profile, hardware=slug, timeouts=timeouts, cpus=cpus))

        speed_verdict(run.rec, run.estimate, alone, remeasure)
        run.rec["cached_baseline_from"] = alone.get("cache") or "given"
        run.rec["cached_baseline_measured_at"] = alone.get("measured_at")
        run.phases["total_s"] = round(time.monotonic() - t0, 6)
    return cast(EvalRecord, json_safe(run.rec))


def _device_kind_for(hardware: Any, child: SandboxedChild) -> str | None:
    """The device generation the candidate is exported for: the timer's device where it is open
    already, else the target's (a TPU kernel lowers per generation)."""
    info = child.hello_info or {}
    if info.get("device_kind"):
        return str(info["device_kind"])
    slug = hardware.slug if isinstance(hardware, hw.Target) else hardware
    return hw.device_kind_of(slug) if slug else None


def _check_baseline(b: Record, wl: Workload, profile: str, hardware: Any) -> None:
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


def baseline_alone(
    workload: Any,
    *,
    profile: str,
    hardware: Any = None,
    cache: str = "disk",
    timeouts: dict[str, float] | None = None,
) -> Record:
    """The baseline alone for a caller that keeps its own copy (the worker, in its database, on
    a miss there): with ``cache="disk"`` this process's copy, else this host's disk cache under
    the same key (another worker or the command line on this host timed it), else measured now
    and stored there; ``"fresh"`` measures now. The copy's ``cache`` says which."""
    wl = workload_of(workload)
    platform = platform_hint(hardware)
    require_platform(wl, platform)
    return _cached_baseline(wl, profile, hardware, platform, cache, timeouts)


def _cached_baseline(
    wl: Workload,
    profile: str,
    hardware: Any,
    platform: str,
    cache: str = "memory",
    timeouts: dict[str, float] | None = None,
) -> Record:
    """The baseline alone for ``hardware`` (None: the hardware a child on ``platform`` detects),
    a copy whose ``cache`` says where it came from: "memory" (measured earlier in this process),
    "disk" (``baseline_cache``: an earlier run's, on this host) or "measured" (now). ``cache``:
    "memory" looks only in this process (the worker's and the API's default: the worker passes
    the baseline it keeps in its database), "disk" also on disk, storing what it measures there
    (the command line), "fresh" measures now and stores it in both."""
    if cache not in BASELINE_CACHES:
        raise ValueError(f"baseline_cache must be one of {BASELINE_CACHES}")
    slug = hardware.slug if isinstance(hardware, hw.Target) else hardware
    where = slug or f"detected:{platform}"
    key = (wl.id, wl.reference, profile, where, HARNESS_VERSION)
    with _BASELINE_LOCK:
        if cache != "fresh" and key in _BASELINES:
            return {**_BASELINES[key], "cache": "memory"}
        disk_key = (
            disk_cache.key_for(wl, profile, where, platform) if cache != "memory" and disk_cache.enabled() else None
        )
        rec = disk_cache.load(disk_key) if disk_key is not None and cache == "disk" else None
        origin = "disk"
        if rec is None:
            rec, origin = dict(measure_baseline(wl, profile=profile, hardware=slug, timeouts=timeouts)), "measured"
            if disk_key is not None:
                disk_cache.store(disk_key, rec)
        rec.pop("cache", None)
        _BASELINES[key] = rec
        return {**rec, "cache": origin}


def measure_baseline(
    workload: Any,
    *,
    profile: str,
    hardware: Any = None,
    timeouts: dict[str, float] | None = None,
    cpus: list[int] | None = None,
) -> BaselineRecord:
    """Time the workload's XLA baseline alone, in a baseline child (the exported program that
    is timed beside every candidate), with the same phases and trace parsing. Returns a
    BaselineRecord dict: the workload page's reference time; verdicts use the side-by-side
    re-timing. A multi-configuration workload's profile: every case measured, the record's
    ``configurations`` holds each case's record and its median is their geometric mean. A case
    whose measurement the load spoiled is measured again on a fresh child, as an evaluation's
    (``retried_while_untrusted``; the reasons in ``load_retries``)."""
    wl = workload_of(workload)
    require_platform(wl, platform_hint(hardware))
    if CASE_SEP not in profile and wl.configuration_names(profile):
        return _baseline_over_cases(wl, profile, hardware, timeouts, cpus)
    rec, reasons = retried_while_untrusted(lambda: _baseline_case(wl, profile, hardware, timeouts, cpus))
    rec["load_retries"] = reasons
    return rec


def _baseline_case(
    wl: Workload, profile: str, hardware: Any, timeouts: dict[str, float] | None, cpus: list[int] | None
) -> BaselineRecord:
    """One case's baseline alone, in one fresh baseline child (``measure_baseline``)."""
    t0 = time.monotonic()
    checked_jax()
    wl.config(profile)
    tmo = resolve_timeouts(timeouts)
    n_check, n_timing = set_counts(wl, profile)
    platform = platform_hint(hardware)
    limits = limits_for(wl, profile, platform, n_check + n_timing)
    if cpus:
        limits.cpus = list(cpus)
    run = Run(wl, profile, mode="baseline", timeouts=tmo, timer=new_timer_child(platform, limits), hardware=hardware)
    try:
        run.prepare(n_check, n_timing)
        try:
            run.start_job()
            run.compile()
            run.check()
            run.time()
        except Stop:
            rec = run.rec
            raise InfrastructureError(
                f"the baseline failed: {rec['outcome']} ({rec['error_category']}): {rec['message']}\n"
                f"{run.the_timer.stderr_tail()[-2000:]}"
            ) from None
        except ChildKilled as exc:
            # no candidate's code runs in a baseline child, before or after it: its death is never
            # a candidate's (no .death for the worker to count against one), only a retry
            raise InfrastructureError(f"the baseline's own child: {exc}") from None
    finally:
        run.the_timer.close()
    rec = run.rec
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
        "seeds": run.the_prep.seeds_hex(),
        "sandbox": rec["sandbox"] or dict(run.the_timer.protections),
        "phases": rec["phases"],
        "measured_at": time.time(),
    }


def _baseline_over_cases(
    wl: Workload, profile: str, hardware: Any, timeouts: dict[str, float] | None, cpus: list[int] | None
) -> BaselineRecord:
    """A multi-configuration profile's baseline: each case's, folded (geometric mean)."""
    each: dict[str, Record] = {
        case: dict(measure_baseline(wl, profile=case, hardware=hardware, timeouts=timeouts, cpus=cpus))
        for case in wl.cases(profile)
    }
    first = next(iter(each.values()))
    timing = configurations.geomean_timing(list(each.values()), "timing")
    assert timing is not None  # every case's baseline has a positive median or raised
    keys = ["kind", "workload", "hardware", "platform", "device_kind", "jax_version", "jaxlib_version"]
    keys += ["harness_version", "sandbox"]
    return cast(
        BaselineRecord,
        {
            **{k: first[k] for k in keys},
            "profile": profile,
            "timing": timing,
            "median_s": timing["median_s"],
            "max_abs_err": max((r.get("max_abs_err") or 0.0) for r in each.values()),
            "errors": None,
            "seeds": {c: r["seeds"] for c, r in each.items()},
            "phases": {"total_s": round(sum(r["phases"].get("total_s") or 0 for r in each.values()), 6)},
            "measured_at": time.time(),
            "configurations": each,
        },
    )


def lower_for_platform(
    workload: Any,
    source: str,
    platform: str = "tpu",
    profile: str = "full",
    timeouts: dict[str, float] | None = None,
    require_pallas: bool = False,
) -> LowerRecord:
    """The pre-check: export the candidate for ``platform`` at ``profile``'s shapes without
    running it (``jax.export`` with ShapeDtypeStructs, on this CPU host, in a sandboxed
    child). Catches Pallas TPU tiling and API errors. Measures the share of the workload's
    FLOPs outside Pallas kernels at these shapes (``pallas_share``); with ``require_pallas``
    a share above the threshold is ``rejected`` (work_outside_pallas). Returns a LowerRecord
    dict. A multi-configuration workload: each case in turn, the first that fails decides."""
    wl = workload_of(workload)
    if CASE_SEP not in profile and wl.configuration_names(profile):
        return _lower_over_cases(wl, source, platform, profile, timeouts, require_pallas)
    t0 = time.monotonic()
    checked_jax()
    wl.config(profile)
    tmo = resolve_timeouts(timeouts)
    out: dict[str, Any] = {
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
    exporter = new_export_child()
    run = Run(wl, profile, mode="candidate", timeouts=tmo, exporter=exporter)
    out["sandbox"] = dict(exporter.protections)
    t = time.monotonic()
    try:
        artifacts = run.export(source, platform=platform, device_kind=None, phase="export")
    except Stop:
        rec = run.rec
        out.update(outcome=rec["outcome"], error_category=rec["error_category"], message=rec["message"])
    else:
        out["jax_version"] = (exporter.hello_info or {}).get("jax_version")
        # read back in a child that never ran the candidate's code (no device opened)
        reader = new_timer_child("cpu", Limits())
        try:
            run.timer = reader
            facts = run.describe(artifacts.program)
        finally:
            reader.close()
        out.update(_judge_lowering(wl, profile, platform, facts, require_pallas))
    out["lower_s"] = round(time.monotonic() - t, 6)
    out["duration_s"] = round(time.monotonic() - t0, 6)
    return cast(LowerRecord, out)


def _judge_lowering(
    wl: Workload, profile: str, platform: str, facts: dict[str, Any], require_pallas: bool
) -> dict[str, Any]:
    """The pre-check's verdict on the facts of the program it lowered."""
    share = pallas_share.assess_artifact(
        facts,
        reference_hlo_cost(wl, profile, platform)["outside_flops"],
        require_pallas=require_pallas,
        threshold=pallas_share.threshold_for(wl.id),
    )
    out: dict[str, Any] = dict(
        has_pallas_call=bool(share.get("kernels_unconditional")),
        host_callbacks=list(facts.get("host_callbacks") or []),
        pallas_share=share,
        artifact=artifact_rules.summary(facts),
    )
    specs, out_leaves = specs_of(wl, profile)
    # the pre-check asks whether the program lowers: an output of the right shape in another
    # dtype is said, and left to the evaluation to judge (public files return float32 where
    # the workload's answer is bfloat16: jaxbench/kernels/experts/README.md)
    relaxed, dtype_notes = artifact_rules.output_dtype_differences(facts.get("out_avals"), out_leaves)
    out["warnings"] = dtype_notes
    bad = artifact_rules.verify(facts, specs, relaxed, hw.export_platform(platform))
    if bad:
        out.update(outcome=Outcome.REJECTED, error_category=bad[0], message=bad[1])
    elif not share["ok"]:
        category = share.get("category") or pallas_share.CATEGORY
        out.update(outcome=Outcome.REJECTED, error_category=category, message=trim(share["message"]))
    else:
        said = "".join("; " + n for n in dtype_notes)
        out.update(ok=True, message=f"lowers for {platform} at {profile} shapes" + said)
    return out


def _lower_over_cases(
    wl: Workload, source: str, platform: str, profile: str, timeouts: dict[str, float] | None, require_pallas: bool
) -> LowerRecord:
    """A multi-configuration profile's pre-check: each case in turn, the first that fails decides."""
    outs: list[LowerRecord] = []
    for case in wl.cases(profile):
        outs.append(lower_for_platform(wl, source, platform, case, timeouts, require_pallas))
        if not outs[-1]["ok"]:
            break
    out: dict[str, Any] = dict(outs[-1], profile=profile)
    keys = ("profile", "ok", "outcome", "error_category", "message", "duration_s")
    out["configurations"] = [{k: o.get(k) for k in keys} for o in outs]
    if not out["ok"]:
        out["message"] = f"configuration {outs[-1]['profile']}: {out['message']}"
    out["duration_s"] = round(sum(o["duration_s"] for o in outs), 6)
    return cast(LowerRecord, out)


def probe_environment(platform: str | None = None) -> dict[str, Any]:
    """What ``check-env`` shows: the hardware a child sees (from its hello, before any
    candidate code), the profile that hardware runs, versions, interpret mode, and the sandbox
    protections active for such a child."""
    platform = platform or platform_hint(None)
    child = new_timer_child(platform, Limits())
    try:
        greet(child, DEFAULT_TIMEOUTS["startup"])
        open_device(child, DEFAULT_TIMEOUTS["startup"])  # on an exclusive device: waits for its lock
        hello = child.hello_info
        assert hello is not None  # set by greet
        target = target_of(None, hello)
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
        "missing_packages": missing_packages(),  # what the trusted side's export lacks
        "sandbox": prot,
    }


def available_protections(platform: str | None = None) -> dict[str, Any]:
    """The sandbox protections this machine offers (see sandbox.probe.available_protections)."""
    return sandbox_probe.available_protections(platform or platform_hint(None))
