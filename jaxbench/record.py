"""The result record: every key an evaluation returns, defined and documented in one place.

``evaluate()`` returns a plain JSON-serialisable ``dict`` with exactly the keys of
:class:`EvalRecord`; ``measure_baseline()`` returns a :class:`BaselineRecord`;
``lower_for_platform()`` returns a :class:`LowerRecord`. Keys are stable: add, never rename.

EvalRecord keys
---------------
``kind``               "evaluation".
``outcome``            one of :data:`OUTCOMES` (exactly one per evaluation).
``error_category``     finer reason (see :data:`CATEGORIES`), None for correct outcomes.
``message``            readable explanation, trimmed to :data:`MESSAGE_CAP` characters (for
                       compile errors: the first useful lines of the JAX/Pallas/Mosaic message
                       and the candidate's own line).
``phase``              the last phase reached: startup, compile, check, timing, verdict.
``workload``           workload ID ("12p"); ``workload_slug`` its slug.
``baseline_program``   what the candidate is timed against: "xla" (the reference under XLA) or
                       "pallas" (a level's hand-tuned Pallas baseline, ``Workload.pallas_baseline``).
``profile``            "small" or "full".
``hardware``           hardware target slug ("cpu", "tpu-v6e"); ``platform`` JAX platform.
``device_kind``        the child's ``jax.devices()[0].device_kind``.
``mode``               "interpret" (cpu target: the candidate's Pallas kernels exported through
                       JAX's generic Pallas interpreter, plain HLO) or "compiled".
``require_pallas``     the rule flag the evaluation ran under.
``has_pallas_call``    a Pallas kernel runs unconditionally in the exported program: a Mosaic /
                       Triton kernel custom call outside every conditional branch (cpu target:
                       in the candidate's TPU export), read by the timer before anything ran.
``host_callbacks``     host-callback custom calls found in the exported program (list).
``artifact``           None, or what the timer read from the candidate's exported program before
                       running it (``verdict.artifact.summary``): custom calls, kernels, module
                       size, FLOPs outside the kernels.
``artifact_bytes``     size of the serialized program the export child wrote, or None.
``artifact_digest``    blake2b-256 (hex) of that judged program, as the trusted side read it once
                       when the child said it was complete, or None.
``kernel_artifacts``   None, or (cpu target) [{bytes, blake2b}] of each kernel's interpreted
                       program, in site order: the timer built the timed cpu twin from these.
``timed_outputs``      None, or {calls, identical_to_checked, checked_here}: every timed output
                       was hashed by the timer; one equal to its input set's checked output is
                       checked, any other was written and compared with the exact answer here.
``timing_order``       None, or {seeds, block, baseline_first}: the block order of the interleaved
                       timing (which program opens each block), drawn by the trusted side, one
                       seed (hex) per timing round.
``resolution``         None, or the adaptive sampling's account {target, halfwidth, rounds, pairs,
                       stopped, budget_s}: the relative half-width the sampling part of the
                       speedup's interval reached (before the systematic widening) against the
                       platform's target, after ``rounds`` rounds of ITERS pairs; ``stopped``:
                       target, rounds, budget or implausible.
``pallas_share``       None (not reached or a baseline), or how much of the workload's FLOPs the
                       candidate computes outside its Pallas kernels
                       (``pallas_share.assess_artifact``): ``outside_flops`` (the walk of the
                       exported program outside its kernel custom calls, by the timer before it
                       ran anything), ``total_flops`` (the same walk over the exported XLA
                       reference), ``inside_flops``, ``outside_share`` (outside / total, None when
                       not measured), ``threshold``, ``by_primitive``, ``top_outside``
                       [{primitive, flops, where: "candidate.py:LINE"}], ``unknown_trip_loops``,
                       ``ok``, ``message``. Measured whatever the rule; decisive (rejected,
                       work_outside_pallas) only under ``require_pallas``.
``max_abs_err``        largest |exact - cand| over all checked outputs (float32), or None.
``max_rel_err``        largest |exact - cand| / |exact| over them, or None.
``errors``             None, or the errors against the exact answer (float32 from the same bf16
                       inputs) over every checked output: ``candidate`` and ``xla`` each
                       {max_abs, max_rel, n_beyond_tol} (elements beyond atol + rtol*|exact|),
                       ``n_fail`` (candidate elements outside tolerance + XLA's own error),
                       ``worst_excess`` (largest error / allowance), ``n_elements``.
``timing``             None, or the candidate's :class:`Timing` dict (below).
``baseline_timing``    None, or the XLA baseline's Timing, re-timed beside the candidate.
``speedup``            median of the paired ratios t_XLA / t_candidate, for correct outcomes.
``speedup_ci``         [lo, hi]: its :data:`CONFIDENCE` bootstrap interval over the pairs.
``speedup_method``     how the interval was computed (resamples, seed).
``baseline_source``    "interleaved": the exported XLA baseline was timed in the candidate's
                       child, on the same inputs, in blocks alternating with the candidate's
                       (ABBA). (Records made before the guard re-timed instead of holding
                       may say "interleaved+alone": the interval covered both estimates and
                       the result was held for review.)
``baseline_median_s``  the re-timed baseline's median, or None.
``cached_baseline_median_s``  the baseline measured alone earlier on the worker, when one was
                       given (shown for reference; the verdict uses the side-by-side timings).
``cached_baseline_from``  where that baseline alone came from, set with it: "given" (the
                       caller's ``baseline``: the worker's, kept in its database), "memory"
                       (measured earlier in this process), "disk" (the command line's disk
                       cache, ``harness.baseline_cache``) or "measured" (now, for this call).
``cached_baseline_measured_at``  when it was measured (unix time), set with it.
``held_for_review``    True when a correct result waits for a staff member's review: the upper
                       bound of its speedup's interval above :data:`REVIEW_SPEEDUP` (10x),
                       a Pallas share that passes only narrowly, or a median above 100% of
                       the ``roofline`` (``verdict.review.hold_reasons``; each reason in ``notes``).
``roofline``           None (not timed, or no sourced peaks for the target: cpu), or the limit
                       of this case on the target (``metrics.roofline.Roofline.as_dict``):
                       ``flops``, ``bytes`` (the workload's cost), ``peak_flops``,
                       ``peak_bandwidth``, ``source`` (``hardware.PEAKS``), ``time_s``
                       (max of the cost over each peak) and ``bound`` ("compute"/"memory").
``seeds``              {"check": [hex...], "timing": [hex...]}: the 64-bit seeds of every
                       input set, drawn from the OS random source by the trusted side and
                       recorded only after the run (``inputs_from_seed`` rebuilds them).
``jax_version``, ``jaxlib_version``, ``harness_version``, ``python_version``.
``sandbox``            the protections active for this child (see
                       ``sandbox.available_protections``).
``phases``             wall seconds seen by the trusted side: startup_s, prepare_s (inputs
                       and references), compile_s, check_s, timing_s, verdict_s, total_s; and
                       the child's own claims: child_compile (import/trace/lower/compile),
                       child_exec_s, child_loop_s, child_baseline_s (compiling, warming up and
                       timing the baseline beside the candidate).
``child_output``       the timer child's {"stdout": tail, "stderr": tail, "bytes": {...}} (capped).
``export_child_output`` the export child's {"stdout": tail, "stderr": tail} (capped): what the
                       candidate's own code printed.
``notes``              list of remarks (e.g. "numerics not pre-checked").
``load_retries``       why this case was timed again on fresh children before this verdict
                       (the machine's load spoiled a measurement: ``MeasurementUntrusted``);
                       empty when the first attempt was trusted.

Sandbox keys (``sandbox``)
--------------------------
``sandbox`` ("bubblewrap" or "none"), ``bubblewrap_version``, ``namespaces`` (list),
``disable_userns``, ``die_with_parent``, ``new_session``, ``cap_drop_all``,
``minimal_filesystem`` (only interpreter, allowlisted packages, child module, inputs, work dir),
``clearenv``, ``private_tmp``, ``unprivileged_uid`` and ``host_uid``, ``no_new_privs``,
``cgroup`` ("v1"/"v2"/None), ``cgroup_pids_max``, ``cgroup_memory_max``, ``rlimits`` (list),
``work_dir_quota`` (size-limited tmpfs work dir), ``oom_score_adj``, ``cpu_affinity`` and
``cpu_pinning`` ("cpuset", "affinity" or None), ``phase_timeouts``, ``process_group_kill``,
``launcher_errors`` (anything the launcher tried and could not do).

Timing keys
-----------
``median_s``, ``min_s``, ``max_s``  over the timed iterations (seconds).
``spread``             (p90 - p10) / median.
``n``                  number of timed iterations used (50 by default).
``samples``            the per-iteration times (seconds).
``method``             "cpu_thunk_span" (XLA CPU client thunk events of the candidate's own
                       program), "device_xla_module" (TPU/GPU device-plane module events),
                       "device_kernel_span", or "wall_clock" (recorded fallback only).
``wall_median_s``      the child's wall-clock median for the same iterations (untrusted).
``phase_wall_s``       trusted wall time of the whole timing phase.
``floor_s``            the physical floor (FLOPs and bytes over the target's peaks, slack
                       applied) the median had to exceed.
``trace_events``       events in the trace file; ``program``: the harness-chosen name.
``contention``         the cpu target's timing core over the round it was busiest with other
                       work (``sandbox.cores.contention``), None elsewhere.
``neighbours``         the cpu target's timing core's cache neighbours: ``cores`` and ``busy``
                       (their busy time in cores, the busiest round); past
                       ``harness.speed.NEIGHBOUR_LIMIT`` the interval is widened
                       (``SHARED_SYSTEMATIC``, said in ``notes``). None elsewhere.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from . import HARNESS_VERSION


class Outcome(StrEnum):
    """The outcome of one evaluation: the one set of names (a ``str``, so records, rows and JSON
    hold the plain value)."""

    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    INCORRECT = "incorrect"
    CORRECT_SLOWER = "correct_slower"
    CORRECT_TIE = "correct_tie"
    CORRECT_FASTER = "correct_faster"
    REJECTED = "rejected"


OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
CORRECT_OUTCOMES: tuple[Outcome, ...] = (Outcome.CORRECT_SLOWER, Outcome.CORRECT_TIE, Outcome.CORRECT_FASTER)
# Human labels, shared by pages, exports and the CLI.
OUTCOME_LABELS = {
    "compile_error": "compile error",
    "runtime_error": "runtime error",
    "timeout": "timeout",
    "incorrect": "incorrect",
    "correct_slower": "correct, slower",
    "correct_tie": "correct, within noise",
    "correct_faster": "correct, faster",
    "rejected": "rejected",
}
CONFIDENCE = 0.95  # level of the speedup interval

CATEGORIES = {
    "compile_error": (
        "syntax_error",
        "import_error",
        "trace_error",
        "pallas_error",
        "lowering_error",
        "mosaic_error",
        "xla_compile_error",
        "cpu_unsupported",
        "compile_timeout",  # import, trace, lowering, reading or compiling past the compile limit
    ),
    "runtime_error": ("exception", "crash", "oom", "exit", "protocol", "bad_output"),
    # "compile" and "export": records written before a compile overrun became compile_timeout
    "timeout": ("compile", "check", "timing", "export"),
    "incorrect": ("structure_mismatch", "not_array", "shape_mismatch", "dtype_mismatch", "non_finite", "not_allclose"),
    "rejected": (
        "no_workload",
        "no_pallas_call",
        "work_outside_pallas",
        "host_callback",
        "returns_input",
        "constant_output",
        "memorized_output",
        "reads_reference",
        "timed_output_mismatch",
        "trace_invalid",
        "implausible_timing",
        # the exported artifact (verdict/artifact.py, pallas_share.assess_artifact)
        "uncountable_work",
        "disallowed_custom_call",
        "artifact_too_large",
        "artifact_unreadable",
        "artifact_mismatch",
        "artifact_tampered",
        "wrong_platform",
        "signature_mismatch",
        "multi_device",
        "ordered_effects",
    ),
}

MESSAGE_CAP = 2000
REVIEW_SPEEDUP = 10.0


class Timing(TypedDict, total=False):
    median_s: float
    min_s: float
    max_s: float
    spread: float
    n: int
    samples: list[float]
    method: str
    wall_median_s: float | None
    phase_wall_s: float | None
    floor_s: float | None
    trace_events: int | None
    program: str | None
    contention: dict[str, Any] | None
    neighbours: dict[str, Any] | None


class EvalRecord(TypedDict):
    kind: str
    outcome: str
    error_category: str | None
    message: str
    phase: str
    workload: str
    workload_slug: str
    profile: str
    hardware: str | None
    platform: str | None
    device_kind: str | None
    mode: str | None
    require_pallas: bool
    has_pallas_call: bool | None
    host_callbacks: list[str]
    artifact: dict[str, Any] | None
    artifact_bytes: int | None
    artifact_digest: str | None
    kernel_artifacts: list[dict[str, Any]] | None
    pallas_share: dict[str, Any] | None
    max_abs_err: float | None
    max_rel_err: float | None
    errors: dict[str, Any] | None
    timing: Timing | None
    baseline_timing: Timing | None
    timed_outputs: dict[str, int] | None
    timing_order: dict[str, Any] | None
    resolution: dict[str, Any] | None
    speedup: float | None
    speedup_ci: list[float] | None
    speedup_method: str | None
    baseline_source: str | None
    cached_baseline_median_s: float | None
    cached_baseline_from: str | None
    cached_baseline_measured_at: float | None
    baseline_median_s: float | None
    held_for_review: bool
    roofline: dict[str, Any] | None
    seeds: dict[str, list[str]]
    jax_version: str | None
    jaxlib_version: str | None
    harness_version: str
    python_version: str | None
    sandbox: dict[str, Any]
    phases: dict[str, Any]
    child_output: dict[str, Any]
    export_child_output: dict[str, Any]
    notes: list[str]
    load_retries: list[str]


class BaselineRecord(TypedDict):
    kind: str  # "baseline"
    workload: str
    profile: str
    hardware: str
    platform: str
    device_kind: str | None
    harness_version: str
    jax_version: str
    jaxlib_version: str
    timing: Timing
    median_s: float
    max_abs_err: float | None  # the baseline child's output vs the exact answer
    errors: dict[str, Any] | None  # as EvalRecord["errors"]
    seeds: dict[str, list[str]]
    sandbox: dict[str, Any]
    phases: dict[str, Any]
    measured_at: float  # unix time
    # only on the copy an evaluation uses as its baseline alone (api._cached_baseline): "memory",
    # "disk" (the command line's disk cache) or "measured"; never in measure_baseline's records
    cache: NotRequired[str]
    # why a case was measured again on a fresh child (the load spoiled it); a measure_baseline
    # record of one case; a multi-configuration one keeps each case's in ``configurations``
    load_retries: NotRequired[list[str]]


class LowerRecord(TypedDict):
    kind: str  # "lowering"
    ok: bool
    outcome: str | None  # None when ok, else compile_error / rejected / timeout / runtime_error
    error_category: str | None
    message: str
    workload: str
    profile: str
    platform: str
    has_pallas_call: bool | None
    host_callbacks: list[str]
    pallas_share: dict[str, Any] | None  # as EvalRecord["pallas_share"], at the lowered shapes
    warnings: list[str]  # what lowers but an evaluation would judge (an output's dtype)
    duration_s: float
    harness_version: str
    jax_version: str | None
    sandbox: dict[str, Any]


# how a message names the baseline of each ``baseline_program``
BASELINE_NAMES = {"xla": "XLA", "pallas": "the Pallas baseline"}


def new_record(**fields: Any) -> dict[str, Any]:
    """An EvalRecord with every key present (defaults), updated with ``fields``."""
    rec: dict[str, Any] = {
        "kind": "evaluation",
        "outcome": "runtime_error",
        "error_category": None,
        "message": "",
        "phase": "startup",
        "workload": "",
        "workload_slug": "",
        "baseline_program": "xla",
        "profile": "",
        "hardware": None,
        "platform": None,
        "device_kind": None,
        "mode": None,
        "require_pallas": True,
        "has_pallas_call": None,
        "host_callbacks": [],
        "artifact": None,
        "artifact_bytes": None,
        "artifact_digest": None,
        "kernel_artifacts": None,
        "pallas_share": None,
        "max_abs_err": None,
        "max_rel_err": None,
        "errors": None,
        "timing": None,
        "baseline_timing": None,
        "timed_outputs": None,
        "timing_order": None,
        "resolution": None,
        "speedup": None,
        "speedup_ci": None,
        "speedup_method": None,
        "baseline_source": None,
        "cached_baseline_median_s": None,
        "cached_baseline_from": None,
        "cached_baseline_measured_at": None,
        "baseline_median_s": None,
        "held_for_review": False,
        "roofline": None,
        "seeds": {},
        "jax_version": None,
        "jaxlib_version": None,
        "harness_version": HARNESS_VERSION,
        "python_version": None,
        "sandbox": {},
        "phases": {},
        "child_output": {},
        "export_child_output": {},
        "notes": [],
        "load_retries": [],
    }
    unknown = set(fields) - set(rec)
    if unknown:
        raise KeyError(f"not record keys: {sorted(unknown)}")
    rec.update(fields)
    return rec


def trim(text: str, cap: int = MESSAGE_CAP) -> str:
    text = (text or "").strip()
    return text if len(text) <= cap else text[: cap - 15] + " ... [trimmed]"


FAILED_OUTCOMES: tuple[Outcome, ...] = tuple(o for o in Outcome if o not in CORRECT_OUTCOMES)
# classify_child_error appends the candidate's own frames as "  at candidate.py:N in f: code"
_WHERE_PREFIX = "at candidate.py:"


def message_head(message: str | None, lines: int = 3) -> str:
    """The first ``lines`` non-blank lines of a failure message, without the candidate's frames:
    what a table row shows (the full text goes behind an expander)."""
    out = [
        ln.rstrip() for ln in (message or "").splitlines() if ln.strip() and not ln.strip().startswith(_WHERE_PREFIX)
    ]
    return "\n".join(out[:lines])


def message_where(message: str | None) -> list[str]:
    """The candidate's source lines a failure message names ("candidate.py:7 in workload: ..."),
    innermost last; empty when it names none."""
    if not message or _WHERE_PREFIX not in message:  # most messages: no line to split out
        return []
    return [ln.strip()[3:] for ln in message.splitlines() if ln.strip().startswith(_WHERE_PREFIX)]


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None: records are stored as JSON, and
    PostgreSQL's jsonb and SQLite's JSON1 refuse NaN/Infinity."""
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def is_correct(record: dict[str, Any]) -> bool:
    return record.get("outcome") in CORRECT_OUTCOMES


def speed_outcome(lo: float, hi: float) -> str:
    """The outcome of a correct candidate from its speedup interval: faster only when the whole
    interval lies above 1, slower only when it lies below 1, a tie (within noise) otherwise."""
    if lo > 1.0:
        return "correct_faster"
    if hi < 1.0:
        return "correct_slower"
    return "correct_tie"


def faster_than(p: float, speedup: float | None, lo: float | None = None) -> bool:
    """Is a correct sample faster than ``p`` x XLA? Conservative: the interval's lower end must
    exceed ``p``. Rows timed before intervals existed (``lo`` None) fall back to the point."""
    if lo is not None:
        return lo > p
    return speedup is not None and speedup > p


# an interval's upper end at or above this is unbounded (a candidate time of ~0)
UNBOUNDED = 1e9


def format_interval(lo: float, hi: float) -> str:
    """``[1.37, 1.48]``; an unbounded upper end shows as ``∞``."""
    return f"[{lo:.2f}, {'∞' if hi >= UNBOUNDED else f'{hi:.2f}'}]"


def format_speedup(speedup: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """``1.42x [1.37, 1.48]``; a row timed before intervals existed shows the point alone."""
    if speedup is None:
        return "-"
    text = f"{speedup:.2f}x"
    if lo is not None and hi is not None:
        text += " " + format_interval(lo, hi)
    return text
