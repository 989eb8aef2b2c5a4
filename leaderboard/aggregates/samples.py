"""The samples the leaderboard folds: one ``FoldSample`` per candidate, built from its
evaluation rows (or from the outcome a trace reports for it).

Which outcome counts for a candidate: its main-stage outcome, or the pre-check outcome that
stopped it (state ``skipped``). A pre-check that passed (``done``) does not count: the main stage
follows. Infrastructure failures (``failed``) are never folded. Nor is a verdict held for review
(``jaxbench.verdict.review.counts_for_ranking``): until a staff member accepts it, its candidate
has no final outcome here (the summary stays partial, unranked); a rejected one folds as the
``rejected`` sample it became.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from evaluator.models import Evaluation, current_versions
from jaxbench import metrics
from jaxbench.metrics.curves import HI_CAP, FoldSample  # FoldSample: defined with the pure folding
from jaxbench.record import Outcome, speed_outcome
from jaxbench.verdict.review import counts_for_ranking
from submissions.models import Candidate

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# One sample, from one row
# --------------------------------------------------------------------------------------------


def counts_for_candidate(stage: str, state: str) -> bool:
    """Whether an evaluation in this stage/state carries the outcome that counts."""
    if stage == Evaluation.PRECHECK:
        return state == Evaluation.SKIPPED
    return state in (Evaluation.DONE, Evaluation.SKIPPED)


def normalize(outcome: str, speedup: Any, interval: Any = None) -> tuple[str, float | None, float | None] | None:
    """(outcome, speedup, low) as ``metrics.update`` accepts it, or None when it cannot count.

    A correct sample with a usable interval [lo, hi] around its speedup keeps the outcome the
    interval gives (faster only when lo > 1, slower only when hi < 1, a tie otherwise). A
    correct sample timed before intervals existed (or a self-reported one without an
    interval) is classified by its point, as then (> 1 faster, else slower), with low = point.
    A correct sample without a usable speedup counts as correct at 1.0x (it is floored to 1
    anyway). Speedups of non-correct outcomes are dropped."""
    if outcome not in metrics.OUTCOMES:
        return None
    if outcome not in metrics.CORRECT_OUTCOMES:
        return outcome, None, None
    try:
        s = float(speedup)
    except (TypeError, ValueError):
        s = float("nan")
    if not (math.isfinite(s) and s > 0):
        return Outcome.CORRECT_SLOWER, 1.0, None
    lo_hi = _interval(interval, s)
    if lo_hi is None:
        if outcome == Outcome.CORRECT_TIE:  # a self-reported tie without its interval
            return Outcome.CORRECT_TIE, s, min(s, 1.0)
        return (Outcome.CORRECT_FASTER if s > 1.0 else Outcome.CORRECT_SLOWER), s, None
    return speed_outcome(*lo_hi), s, lo_hi[0]


def _interval(interval: Any, point: float) -> tuple[float, float] | None:
    try:
        lo, hi = (float(x) for x in interval)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= point <= hi):
        return None
    return lo, hi


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def timing_from_record(record: Mapping | None) -> dict[str, float | None]:
    """Candidate and baseline medians and relative spreads from an evaluation record:
    ``timing: {median_s, spread}``, ``baseline_median_s``, ``baseline_spread`` (or
    ``baseline: {median_s, spread}``)."""
    record = record or {}
    timing = record.get("timing") or {}
    baseline = record.get("baseline") if isinstance(record.get("baseline"), Mapping) else {}
    return {
        "median_s": _num(timing.get("median_s")),
        "spread": _num(timing.get("spread")),
        "baseline_median_s": _num(record.get("baseline_median_s") or baseline.get("median_s")),
        "baseline_spread": _num(
            record.get("baseline_spread") if record.get("baseline_spread") is not None else baseline.get("spread")
        ),
    }


def interval_from_timing(t: Mapping[str, float | None], speedup: float | None) -> tuple[float, float] | None:
    """``metrics.speedup_interval`` of the record's timings (spreads default to 0), widened to
    contain the recorded speedup; None without timings."""
    bm, cm = t.get("baseline_median_s"), t.get("median_s")
    if not bm or not cm or bm <= 0 or cm <= 0:
        return None
    bs = t.get("baseline_spread") or 0.0
    cs = t.get("spread") or 0.0
    try:
        lo, hi = metrics.speedup_interval(bm, max(0.0, bs), cm, max(0.0, cs))
    except ValueError:
        return None
    if speedup is not None:
        lo, hi = min(lo, speedup), max(hi, speedup)
    return lo, min(hi, HI_CAP)


def _versions_from_record(record: Mapping | None) -> tuple[str, str]:
    record = record or {}
    versions = record.get("versions") if isinstance(record.get("versions"), Mapping) else {}
    jax = record.get("jax_version") or versions.get("jax") or ""
    harness = record.get("harness_version") or versions.get("harness") or ""
    return str(jax), str(harness)


def sample_from_evaluation(
    workload_id: int, index: int, stage: str, state: str, outcome: str, speedup, record, finished_at=None, review=""
) -> FoldSample | None:
    if not counts_for_candidate(stage, state) or not counts_for_ranking(review):
        return None
    ci = (record or {}).get("speedup_ci")
    norm = normalize(outcome, speedup, ci)
    if norm is None:
        log.warning("evaluation of candidate %s/%s has no outcome that counts (%r)", workload_id, index, outcome)
        return None
    outcome, speedup, low = norm
    t = timing_from_record(record)
    jax, harness = _versions_from_record(record)
    measured = low is not None and _interval(ci, speedup) is not None
    if measured:
        interval = _interval(ci, speedup)  # measured side by side
    else:  # timed before intervals existed
        interval = interval_from_timing(t, speedup) if speedup is not None else None
    return FoldSample(
        workload_id=workload_id,
        index=index,
        outcome=outcome,
        speedup=speedup,
        low=low,
        interval=interval,
        measured=measured,
        median_s=t["median_s"],
        baseline_median_s=t["baseline_median_s"],
        precheck=(stage == Evaluation.PRECHECK),
        jax_version=jax,
        harness_version=harness,
        finished_at=finished_at,
    )


def sample_from_report(
    workload_id: int, index: int, reported_outcome: str, reported_speedup, reported_interval=None
) -> FoldSample | None:
    norm = normalize(reported_outcome, reported_speedup, reported_interval)
    if norm is None:
        return None
    interval = _interval(reported_interval, norm[1]) if norm[2] is not None else None
    return FoldSample(
        workload_id=workload_id,
        index=index,
        outcome=norm[0],
        speedup=norm[1],
        low=norm[2],
        interval=interval,
        measured=interval is not None,
    )


# --------------------------------------------------------------------------------------------
# A submission's samples, from its rows
# --------------------------------------------------------------------------------------------


def chosen_samples(qs, *group_by: str) -> dict[tuple, list[FoldSample]]:
    """The outcome that counts for each candidate (main stage first) among the evaluation rows of
    ``qs``, grouped by the values of the fields ``group_by`` (e.g. ``hardware_id``,
    ``workload_version``, ``harness_version``): a candidate counts once per group."""
    k = len(group_by)
    chosen: dict[tuple[tuple, int], FoldSample] = {}
    rows = qs.values_list(
        *group_by,
        "candidate_id",
        "candidate__workload_id",
        "candidate__index",
        "stage",
        "state",
        "outcome",
        "speedup",
        "record",
        "finished_at",
        "review",
    ).order_by("id")
    for row in rows.iterator(chunk_size=2000):
        group = tuple(row[:k])
        cand, wl, index, stage, state, outcome, speedup, record, finished, review = row[k:]
        s = sample_from_evaluation(wl, index, stage, state, outcome, speedup, record, finished, review)
        if s is None:
            continue
        key = (group, cand)
        if key in chosen and not chosen[key].precheck:  # a main-stage outcome wins
            continue
        chosen[key] = s
    out: dict[tuple, list[FoldSample]] = {}
    for (group, _), s in chosen.items():
        out.setdefault(group, []).append(s)
    return out


def evaluated_samples(
    submission_id: int, hardware_id: int | None = None, workload_id: int | None = None
) -> list[tuple[int, FoldSample]]:
    """[(hardware_id, sample)]: the outcome that counts for each candidate (main stage first),
    from its evaluations of the workload's current version under the current harness only
    (``evaluator.models.current_versions``: earlier versions are kept, never folded, since
    results of different versions are not comparable)."""
    qs = Evaluation.objects.filter(
        current_versions(), candidate__submission_id=submission_id, state__in=(Evaluation.DONE, Evaluation.SKIPPED)
    )
    if hardware_id is not None:
        qs = qs.filter(hardware_id=hardware_id)
    if workload_id is not None:
        qs = qs.filter(candidate__workload_id=workload_id)
    return [(hw, s) for (hw,), samples in chosen_samples(qs, "hardware_id").items() for s in samples]


def reported_samples(submission_id: int) -> list[FoldSample]:
    out = []
    for wl, index, outcome, speedup, lo, hi in (
        Candidate.objects.filter(submission_id=submission_id)
        .exclude(reported_outcome="")
        .values_list(
            "workload_id", "index", "reported_outcome", "reported_speedup", "reported_speedup_lo", "reported_speedup_hi"
        )
        .order_by()
    ):
        s = sample_from_report(wl, index, outcome, speedup, (lo, hi) if lo is not None else None)
        if s is not None:
            out.append(s)
    return out
