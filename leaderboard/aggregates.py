"""Fold finished evaluations into the leaderboard aggregates (``leaderboard.models``).

Two entry points:

* ``refresh_for_evaluation(evaluation)``: called by the evaluator worker when an Evaluation
  reaches a final state. It folds that ONE evaluation into its (submission, workload, hardware)
  ``WorkloadResult`` with ``metrics.update`` and adds the change of that workload's contribution
  curves to the ``SubmissionSummary``, under row locks (``select_for_update``: row locks on
  PostgreSQL; on SQLite the IMMEDIATE transaction takes the database write lock). It reads and
  writes two rows: cost independent of the number of samples already folded (except in the rare
  repeated-refresh path, see below).
* ``rebuild_submission(submission)``: full recompute from the evaluations (the management
  command ``rebuild_aggregates``), through the same folding code (``fold``).

Which outcome counts for a candidate: its main-stage outcome, or the pre-check outcome that
stopped it (state ``skipped``). A pre-check that passed (``done``) does not count: the main stage
follows. Infrastructure failures (``failed``) are never folded.

Curves. For every workload w and budget N = 1..L_w the aggregate gives w's contribution to the
set metrics: ``log`` = E[ln s_w(N)], ``lo``/``hi`` = ln of the floored ends of the speedup interval
of the sample that defines s_w(N), ``solved`` = P(solved within N), ``fast`` = P(fast within N)
(p = 1). Beyond L_w (the last index + 1, or the sample count in independent mode) every
contribution is constant. A set's curves are the sums over its workloads, so the floored geomean
at N is ``exp(log_sum(N) / |W|)`` (exactly ``metrics.floored_geomean``), solved(N) is
``solved_sum(N)`` and fast@N is ``fast_sum(N) / |W|``: any N is answered from one summary row.
Curves are stored as packed little-endian float64 arrays (``pack_curves``): a page reads the
value at N of hundreds of summaries in microseconds.
"""
from __future__ import annotations

import array
import bisect
import dataclasses
import logging
import math
import struct
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum

from evaluator.bench.record import speed_outcome
from leaderboard import metrics
from leaderboard.metrics import INDEPENDENT, SEQUENTIAL, WorkloadAggregate
from leaderboard.models import SET_NAMES, SubmissionSummary, WorkloadResult

log = logging.getLogger(__name__)

CURVE_KEYS = ("log", "lo", "hi", "solved", "fast")
HI_CAP = 1e12          # an interval whose high end is +inf (noise swamps the time) is capped here

# Workload sets: the same definitions as the workload pages (evaluator.views.workloads.SETS).
SET_FILTERS: dict[str, dict[str, Any]] = {
    "all": {},
    "production": {"source": "maxtext"},
    "kernelbench": {"source": "kernelbench-l2"},
    "expert": {"expert": True},
}
assert tuple(SET_FILTERS) == SET_NAMES


def sets_of(source: str, expert: bool) -> tuple[str, ...]:
    """The workload sets a workload belongs to."""
    attrs = {"source": source, "expert": bool(expert)}
    return tuple(name for name, flt in SET_FILTERS.items() if all(attrs[k] == v for k, v in flt.items()))


def set_sizes() -> dict[str, int]:
    """|W| of every set, from the workload table."""
    from evaluator.models import Workload
    sizes = dict.fromkeys(SET_NAMES, 0)
    for source, expert in Workload.objects.values_list("source", "expert"):
        for name in sets_of(source, expert):
            sizes[name] += 1
    return sizes


# --------------------------------------------------------------------------------------------
# Packed curves
# --------------------------------------------------------------------------------------------

def pack_curves(curves: Mapping[str, Iterable[float]] | None) -> bytes:
    """``{key: [v_1 .. v_L]}`` for the keys of CURVE_KEYS (equal lengths) -> bytes."""
    if not curves:
        return struct.pack("<I", 0)
    cols = [array.array("d", curves[k]) for k in CURVE_KEYS]
    n = len(cols[0])
    if any(len(c) != n for c in cols):
        raise ValueError("curves must have equal lengths")
    out = array.array("d")
    for c in cols:
        out.extend(c)
    if sys.byteorder != "little":
        out.byteswap()
    return struct.pack("<I", n) + out.tobytes()


def unpack_curves(blob) -> dict[str, array.array]:
    data = bytes(blob or b"")
    if len(data) < 4:
        return {k: array.array("d") for k in CURVE_KEYS}
    (n,) = struct.unpack_from("<I", data)
    arr = array.array("d")
    arr.frombytes(data[4:4 + 8 * n * len(CURVE_KEYS)])
    if sys.byteorder != "little":
        arr.byteswap()
    return {k: arr[i * n:(i + 1) * n] for i, k in enumerate(CURVE_KEYS)}


def curve_value(values, n: int | None) -> float:
    """Value of a curve at budget n (None: full budget); 0.0 before the first sample and for
    an empty curve; constant beyond its end."""
    if not len(values) or n == 0:
        return 0.0
    if n is None or n >= len(values):
        return values[-1]
    return values[n - 1]


def _pad(values, length: int) -> list[float]:
    values = list(values)
    fill = values[-1] if values else 0.0
    return values + [fill] * (length - len(values))


def add_curves(total: Mapping[str, Any], new: Mapping[str, Any], old: Mapping[str, Any] | None = None):
    """``total + new - old`` element-wise, every curve extended by its last value."""
    length = max(len(total["log"]), len(new["log"]), len(old["log"]) if old else 0)
    out = {}
    for k in CURVE_KEYS:
        t, a = _pad(total[k], length), _pad(new[k], length)
        if old:
            b = _pad(old[k], length)
            out[k] = [x + y - z for x, y, z in zip(t, a, b)]
        else:
            out[k] = [x + y for x, y in zip(t, a)]
    return out


def empty_curves() -> dict[str, list[float]]:
    return {k: [] for k in CURVE_KEYS}


# --------------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FoldSample:
    """One finished sample as the aggregates need it."""
    workload_id: int
    index: int
    outcome: str
    speedup: float | None = None
    low: float | None = None                          # the interval's low end (None: legacy row)
    interval: tuple[float, float] | None = None     # speedup interval from the timings
    measured: bool = False                            # interval = the 95% one timed side by side
    median_s: float | None = None                     # the candidate's time
    baseline_median_s: float | None = None
    precheck: bool = False                            # stopped by the pre-check
    jax_version: str = ""
    harness_version: str = ""
    finished_at: Any = None


def counts_for_candidate(stage: str, state: str) -> bool:
    """Whether an evaluation in this stage/state carries the outcome that counts."""
    from evaluator.models import Evaluation
    if stage == Evaluation.PRECHECK:
        return state == Evaluation.SKIPPED
    return state in (Evaluation.DONE, Evaluation.SKIPPED)


def normalize(outcome: str, speedup: Any, interval: Any = None
              ) -> tuple[str, float | None, float | None] | None:
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
        return "correct_slower", 1.0, None
    lo_hi = _interval(interval, s)
    if lo_hi is None:
        if outcome == "correct_tie":       # a self-reported tie without its interval
            return "correct_tie", s, min(s, 1.0)
        return ("correct_faster" if s > 1.0 else "correct_slower"), s, None
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
        "baseline_spread": _num(record.get("baseline_spread") if record.get("baseline_spread") is not None
                                else baseline.get("spread")),
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


def sample_from_evaluation(workload_id: int, index: int, stage: str, state: str, outcome: str,
                           speedup, record, finished_at=None) -> FoldSample | None:
    from evaluator.models import Evaluation
    if not counts_for_candidate(stage, state):
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
        interval = _interval(ci, speedup)                # measured side by side
    else:                                                # timed before intervals existed
        interval = interval_from_timing(t, speedup) if speedup is not None else None
    return FoldSample(workload_id=workload_id, index=index, outcome=outcome, speedup=speedup,
                      low=low, interval=interval, measured=measured, median_s=t["median_s"],
                      baseline_median_s=t["baseline_median_s"],
                      precheck=(stage == Evaluation.PRECHECK), jax_version=jax, harness_version=harness,
                      finished_at=finished_at)


def sample_from_report(workload_id: int, index: int, reported_outcome: str, reported_speedup,
                       reported_interval=None) -> FoldSample | None:
    norm = normalize(reported_outcome, reported_speedup, reported_interval)
    if norm is None:
        return None
    interval = _interval(reported_interval, norm[1]) if norm[2] is not None else None
    return FoldSample(workload_id=workload_id, index=index, outcome=norm[0], speedup=norm[1],
                      low=norm[2], interval=interval, measured=interval is not None)


# --------------------------------------------------------------------------------------------
# Per-workload state, folding and curves
# --------------------------------------------------------------------------------------------

class DuplicateSample(ValueError):
    pass


@dataclasses.dataclass
class WorkloadState:
    agg: WorkloadAggregate = dataclasses.field(default_factory=WorkloadAggregate)
    folded: set[int] = dataclasses.field(default_factory=set)
    # index -> [low, high, candidate median_s, baseline median_s, measured (1: the 95% interval
    # timed side by side; 0: timed before intervals existed)] for the progression records
    records: dict[int, list] = dataclasses.field(default_factory=dict)
    precheck_stopped: int = 0

    @classmethod
    def from_row(cls, row: WorkloadResult | None) -> WorkloadState:
        if row is None or not row.aggregate:
            return cls()
        return cls(agg=WorkloadAggregate.from_dict(row.aggregate), folded=set(row.folded),
                   records={int(k): list(v) for k, v in (row.intervals or {}).items()},
                   precheck_stopped=row.precheck_stopped)

    def best_record(self) -> tuple[int | None, list | None]:
        if not self.agg.progression:
            return None, None
        i = self.agg.progression[-1][0]
        return i, self.records.get(i)

    def to_row_fields(self, mode: str) -> dict[str, Any]:
        agg = self.agg
        best_index, rec = self.best_record()
        return {
            "aggregate": agg.to_dict(),
            "n_samples": agg.n_samples,
            "n_correct": agg.n_correct,
            "n_faster": agg.n_faster,
            "best_speedup": agg.best_speedup,
            "best_index": best_index,
            "best_low": rec[0] if rec else None,
            "best_high": rec[1] if rec else None,
            # a record folded before the flag existed (4 entries) says nothing: a rebuild tells
            "best_before_intervals": bool(rec) and len(rec) > 4 and not rec[4],
            "n_tie": agg.count("correct_tie"),
            "best_median_s": rec[2] if rec else None,
            "baseline_median_s": rec[3] if rec else None,
            "first_correct_index": agg.first_correct_index,
            "first_faster_index": agg.first_faster_index,
            "precheck_stopped": self.precheck_stopped,
            "folded": sorted(self.folded),
            "intervals": {str(k): v for k, v in sorted(self.records.items())},
            "curves": pack_curves(workload_curves(agg, self.records, mode)),
        }


def fold(state: WorkloadState, sample: FoldSample) -> WorkloadState:
    """Fold ONE sample into ``state`` (in place) with ``metrics.update``; raises
    DuplicateSample when its index was folded already."""
    if sample.index in state.folded:
        raise DuplicateSample(f"sample {sample.index} of workload {sample.workload_id} already folded")
    state.agg = metrics.update(state.agg, sample.index, sample.outcome, sample.speedup, sample.low)
    state.folded.add(sample.index)
    if sample.precheck:
        state.precheck_stopped += 1
    if sample.outcome in metrics.CORRECT_OUTCOMES:
        in_prog = {i for i, _ in state.agg.progression}
        if sample.index in in_prog:
            lo, hi = sample.interval or (sample.speedup, sample.speedup)
            state.records[sample.index] = [lo, hi, sample.median_s, sample.baseline_median_s,
                                           int(sample.measured)]
        state.records = {i: v for i, v in state.records.items() if i in in_prog}
    return state


def curve_length(agg: WorkloadAggregate, mode: str) -> int:
    if mode == INDEPENDENT:
        return agg.n_samples
    return 0 if agg.max_index is None else agg.max_index + 1


def _floored_log(x: float | None) -> float:
    return math.log(min(x, HI_CAP)) if x is not None and x > 1.0 else 0.0


def _independent_log_curve(agg: WorkloadAggregate, length: int) -> list[float]:
    """E[ln s_w(N)] for N = 1..length in independent mode: ``metrics.expected_log_speedup`` for
    every N at once. The weight of the k-th smallest value, C(k-1, N-1) / C(n, N), follows
    w(N+1) = w(N) (k - N)(N + 1) / (N (n - N)) from w(1) = 1/n (tests check it against
    ``metrics.expected_log_speedup`` at every N)."""
    n = agg.n_samples
    # the point speedups above 1 (the non-zero logarithms): a tie's point may be one of them
    faster = agg.correct_speedups[bisect.bisect_right(agg.correct_speedups, 1.0):]
    if not faster or n == 0:
        return [0.0] * length
    first_rank = n - len(faster)
    ranks = [first_rank + j + 1 for j in range(len(faster))]
    logs = [math.log(v) for v in faster]
    weights = [1.0 / n] * len(faster)
    out = []
    for big_n in range(1, length + 1):
        if big_n >= n:
            out.append(math.log(faster[-1]))
            continue
        out.append(math.fsum(lg * w for lg, w in zip(logs, weights)))
        factor = (big_n + 1) / (big_n * (n - big_n))
        weights = [w * (k - big_n) * factor if k > big_n else 0.0 for w, k in zip(weights, ranks)]
    return out


def workload_curves(agg: WorkloadAggregate, records: Mapping[int, Any], mode: str) -> dict[str, list[float]]:
    """The workload's contribution curves for N = 1..curve_length (see the module docstring)."""
    length = curve_length(agg, mode)
    if length == 0:
        return empty_curves()
    if mode == INDEPENDENT:
        solved = [metrics.solve_probability(agg, n, mode) for n in range(1, length + 1)]
        fast = [metrics.fast_probability(agg, n, metrics.DEFAULT_P, mode) for n in range(1, length + 1)]
    else:       # steps: 1.0 from the first N that holds a correct (faster) sample
        fc = agg.first_correct_index if agg.n_correct else None
        ff = agg.first_faster_index if agg.n_correct else None
        solved = [1.0 if fc is not None and fc < n else 0.0 for n in range(1, length + 1)]
        fast = [1.0 if ff is not None and ff < n else 0.0 for n in range(1, length + 1)]
    if mode == INDEPENDENT:
        logs = _independent_log_curve(agg, length)
        lo, hi = list(logs), list(logs)
        if agg.progression:               # at the full budget: the interval of the best sample
            rec = records.get(agg.progression[-1][0])
            if rec:
                lo[-1], hi[-1] = _floored_log(rec[0]), _floored_log(rec[1])
        return {"log": logs, "lo": lo, "hi": hi, "solved": solved, "fast": fast}
    # Sequential: every value at N is a step of the progression (the running best of the
    # samples with index < N), so one walk gives all N (equal to metrics.expected_log_speedup
    # at every N; tests check it).
    logs, lo, hi = [], [], []
    prog = agg.progression
    j = 0
    cur = (0.0, 0.0, 0.0)
    for n in range(1, length + 1):
        if j < len(prog) and prog[j][0] < n:
            while j < len(prog) and prog[j][0] < n:
                j += 1
            i, s = prog[j - 1]
            rec = records.get(i)
            cur = (math.log(s) if s > 1.0 else 0.0, _floored_log(rec[0] if rec else s),
                   _floored_log(rec[1] if rec else s))
        logs.append(cur[0])
        lo.append(cur[1])
        hi.append(cur[2])
    return {"log": logs, "lo": lo, "hi": hi, "solved": solved, "fast": fast}


# --------------------------------------------------------------------------------------------
# Summary fields
# --------------------------------------------------------------------------------------------

def set_values(curves: Mapping[str, Any], size: int, n: int | None = None) -> dict[str, float]:
    """solved, floored geomean (+ interval) and fast@n of one set from its summed curves."""
    if size <= 0:
        return {"size": 0, "solved": 0.0, "geomean": 1.0, "low": 1.0, "high": 1.0, "fast": 0.0}
    return {
        "size": size,
        "solved": curve_value(curves["solved"], n),
        "geomean": math.exp(curve_value(curves["log"], n) / size),
        "low": math.exp(curve_value(curves["lo"], n) / size),
        "high": math.exp(curve_value(curves["hi"], n) / size),
        "fast": curve_value(curves["fast"], n) / size,
    }


def _apply_set_scalars(summary: SubmissionSummary, set_curves: Mapping[str, Mapping], sizes: Mapping[str, int]):
    """Store the curves and full-budget values of the sets in ``set_curves`` (others unchanged)."""
    sets = dict(summary.sets or {})
    for name, curves in set_curves.items():
        v = set_values(curves, sizes.get(name, 0))
        sets[name] = v
        setattr(summary, f"solved_{name}", v["solved"])
        setattr(summary, f"geomean_{name}", v["geomean"])
        setattr(summary, f"fast_{name}", v["fast"])
        setattr(summary, f"curves_{name}", pack_curves(curves))
        summary.curve_length = max(summary.curve_length or 0, len(curves["log"]))
    summary.sets = sets


def _sizes_of(summary: SubmissionSummary) -> dict[str, int]:
    """The set sizes the summary was computed with (a rebuild refreshes them)."""
    sets = summary.sets or {}
    if all(name in sets and "size" in sets[name] for name in SET_NAMES):
        return {name: sets[name]["size"] for name in SET_NAMES}
    return set_sizes()


def _counts_fields(summary: SubmissionSummary):
    total = sum(summary.counts.values())
    summary.n_samples = total
    summary.n_correct = sum(summary.counts.get(o, 0) for o in metrics.CORRECT_OUTCOMES)
    summary.per_sample_correctness = (summary.n_correct / total) if total else None
    summary.complete = (summary.source == SubmissionSummary.EVALUATED and summary.candidates_total > 0
                        and total >= summary.candidates_total)


def _candidate_totals(submission_id: int) -> dict[str, Any]:
    """Candidate count, and total tokens / cost when every candidate reports them."""
    from portal.models import Candidate
    a = Candidate.objects.filter(submission_id=submission_id).aggregate(
        n=Count("id"), tin=Sum("tokens_in"), tout=Sum("tokens_out"),
        n_tok=Count("id", filter=Q(tokens_in__isnull=False) | Q(tokens_out__isnull=False)),
        cost=Sum("cost_usd"), n_cost=Count("cost_usd"))
    n = a["n"] or 0
    tokens = (a["tin"] or 0) + (a["tout"] or 0) if n and a["n_tok"] == n else None
    cost = a["cost"] if n and a["n_cost"] == n else None
    return {"candidates_total": n, "tokens_total": tokens, "cost_total": cost}


def build(samples: Iterable[FoldSample]) -> tuple[dict[int, WorkloadState], dict[str, Any]]:
    """Fold every sample (any order) through ``fold``: per-workload states and the summary's
    accumulated fields (counts, versions, last time)."""
    states: dict[int, WorkloadState] = {}
    counts = dict.fromkeys(metrics.OUTCOMES, 0)
    jax, harness = set(), set()
    last = None
    for s in samples:
        st = states.setdefault(s.workload_id, WorkloadState())
        fold(st, s)
        counts[s.outcome] += 1
        if s.jax_version:
            jax.add(s.jax_version)
        if s.harness_version:
            harness.add(s.harness_version)
        if s.finished_at is not None and (last is None or s.finished_at > last):
            last = s.finished_at
    return states, {"counts": counts, "jax_versions": sorted(jax), "harness_versions": sorted(harness),
                    "last_evaluated_at": last}


def summary_from_states(summary: SubmissionSummary, states: Mapping[int, WorkloadState],
                        acc: Mapping[str, Any], workload_sets, sizes) -> list[WorkloadResult]:
    """Fill ``summary`` (not saved) from the folded states; return its unsaved WorkloadResults.
    ``workload_sets``: workload pk -> (wid, sets it belongs to) (``workload_set_map``)."""
    set_curves = {name: empty_curves() for name in SET_NAMES}
    rows, best = [], {}
    for wl_id, st in sorted(states.items(), key=lambda kv: kv[0]):
        fields = st.to_row_fields(summary.mode)
        curves = unpack_curves(fields["curves"])
        wid, names = workload_sets[wl_id]
        for name in names:
            set_curves[name] = add_curves(set_curves[name], curves)
        best[wid] = st.agg.best_speedup
        rows.append(WorkloadResult(summary=summary, submission_id=summary.submission_id, workload_id=wl_id,
                                   hardware_id=summary.hardware_id, source=summary.source, **fields))
    summary.counts = dict(acc["counts"])
    summary.jax_versions = list(acc["jax_versions"])
    summary.harness_versions = list(acc["harness_versions"])
    summary.last_evaluated_at = acc["last_evaluated_at"]
    summary.precheck_stopped = sum(st.precheck_stopped for st in states.values())
    summary.best = best
    _counts_fields(summary)
    summary.curve_length, summary.sets = 0, {}
    _apply_set_scalars(summary, set_curves, sizes)
    return rows


def workload_set_map(workload_ids: Iterable[int] | None = None) -> dict[int, tuple[str, tuple[str, ...]]]:
    from evaluator.models import Workload
    qs = Workload.objects.all()
    if workload_ids is not None:
        qs = qs.filter(pk__in=list(workload_ids))
    return {pk: (wid, sets_of(source, expert)) for pk, wid, source, expert in
            qs.values_list("pk", "wid", "source", "expert")}


# --------------------------------------------------------------------------------------------
# refresh_for_evaluation: fold ONE evaluation
# --------------------------------------------------------------------------------------------

def _lock_summary(submission_id: int, hardware_id: int, source: str, mode: str) -> tuple[SubmissionSummary, bool]:
    """The summary row, locked (select_for_update); created (with the candidates' totals) if
    missing. Must run inside transaction.atomic()."""
    qs = SubmissionSummary.objects.select_for_update().order_by()
    found = list(qs.filter(submission_id=submission_id, hardware_id=hardware_id, source=source)[:1])
    if found:
        return found[0], False
    summary = SubmissionSummary(submission_id=submission_id, hardware_id=hardware_id, source=source, mode=mode,
                                counts=dict.fromkeys(metrics.OUTCOMES, 0), **_candidate_totals(submission_id))
    _apply_set_scalars(summary, {name: empty_curves() for name in SET_NAMES}, set_sizes())
    try:
        with transaction.atomic():
            summary.save(force_insert=True)
        return summary, True
    except IntegrityError:          # created concurrently: lock the winner's row
        return qs.get(submission_id=submission_id, hardware_id=hardware_id, source=source), False


def _evaluated_samples(submission_id: int, hardware_id: int | None = None,
                       workload_id: int | None = None) -> list[tuple[int, FoldSample]]:
    """[(hardware_id, sample)]: the outcome that counts for each candidate (main stage first)."""
    from evaluator.models import Evaluation
    qs = Evaluation.objects.filter(candidate__submission_id=submission_id,
                                   state__in=(Evaluation.DONE, Evaluation.SKIPPED))
    if hardware_id is not None:
        qs = qs.filter(hardware_id=hardware_id)
    if workload_id is not None:
        qs = qs.filter(candidate__workload_id=workload_id)
    chosen: dict[tuple[int, int], FoldSample] = {}
    rows = qs.values_list("hardware_id", "candidate_id", "candidate__workload_id", "candidate__index", "stage",
                          "state", "outcome", "speedup", "record", "finished_at").order_by("id")
    for hw, cand, wl, index, stage, state, outcome, speedup, record, finished in rows.iterator(chunk_size=2000):
        s = sample_from_evaluation(wl, index, stage, state, outcome, speedup, record, finished)
        if s is None:
            continue
        key = (hw, cand)
        if key in chosen and not chosen[key].precheck:   # a main-stage outcome wins
            continue
        chosen[key] = s
    return [(hw, s) for (hw, _), s in chosen.items()]


def refresh_for_evaluation(evaluation) -> WorkloadResult | None:
    """Fold ONE finished evaluation into the leaderboard aggregates; return its WorkloadResult
    (None when the evaluation does not carry the outcome that counts for its candidate).

    Idempotent: refreshing an evaluation whose sample is already folded recomputes that one
    workload from its evaluations (e.g. a re-run), so a repeated call changes nothing."""
    from portal.models import Candidate
    ev = evaluation
    cand = (Candidate.objects.filter(pk=ev.candidate_id)
            .values("index", "workload_id", "submission_id", "submission__sampling", "submission__kind",
                    "workload__wid", "workload__source", "workload__expert").first())
    if cand is None:
        return None
    sample = sample_from_evaluation(cand["workload_id"], cand["index"], ev.stage, ev.state, ev.outcome,
                                    ev.speedup, ev.record, ev.finished_at)
    if sample is None:
        return None
    mode = INDEPENDENT if cand["submission__sampling"] == INDEPENDENT else SEQUENTIAL
    names = sets_of(cand["workload__source"], cand["workload__expert"])
    # savepoint=False: inside the verdict's transaction (evaluator.runner.finish) a savepoint
    # would cost two more round trips and buy nothing; any error here aborts the verdict too.
    with transaction.atomic(savepoint=False):
        summary, created = _lock_summary(cand["submission_id"], ev.hardware_id, SubmissionSummary.EVALUATED, mode)
        before = {f.attname: getattr(summary, f.attname) for f in SubmissionSummary._meta.concrete_fields}
        found = list(WorkloadResult.objects.select_for_update().order_by()
                     .filter(summary=summary, workload_id=cand["workload_id"])[:1])
        row = found[0] if found else None
        old = WorkloadState.from_row(row)
        new = WorkloadState.from_row(row)
        try:
            fold(new, sample)
            repeated = False
        except DuplicateSample:
            repeated = True
            samples = [s for hw, s in _evaluated_samples(cand["submission_id"], ev.hardware_id, cand["workload_id"])]
            new = build(samples)[0].get(cand["workload_id"], WorkloadState())
        fields = new.to_row_fields(mode)
        new_curves = unpack_curves(fields["curves"])
        old_curves = unpack_curves(row.curves) if row is not None else empty_curves()
        update = row is not None
        if row is None:
            row = WorkloadResult(summary=summary, submission_id=cand["submission_id"],
                                 workload_id=cand["workload_id"], hardware_id=ev.hardware_id,
                                 source=SubmissionSummary.EVALUATED)
        for k, v in fields.items():
            setattr(row, k, v)
        # an UPDATE of the derived columns only (the keys never change)
        row.save(update_fields=[*fields, "updated_at"] if update else None)

        # The summary: add the change of this workload's contribution.
        set_curves = {name: add_curves(unpack_curves(getattr(summary, f"curves_{name}")), new_curves, old_curves)
                      for name in names}
        counts = dict(summary.counts) or dict.fromkeys(metrics.OUTCOMES, 0)
        for o, c_new, c_old in zip(metrics.OUTCOMES, new.agg.counts, old.agg.counts):
            counts[o] = counts.get(o, 0) + c_new - c_old
        summary.counts = counts
        summary.precheck_stopped += new.precheck_stopped - old.precheck_stopped
        summary.best = dict(summary.best, **{cand["workload__wid"]: new.agg.best_speedup})
        if not repeated:
            if sample.jax_version and sample.jax_version not in summary.jax_versions:
                summary.jax_versions = sorted([*summary.jax_versions, sample.jax_version])
            if sample.harness_version and sample.harness_version not in summary.harness_versions:
                summary.harness_versions = sorted([*summary.harness_versions, sample.harness_version])
        if sample.finished_at is not None and (summary.last_evaluated_at is None
                                               or sample.finished_at > summary.last_evaluated_at):
            summary.last_evaluated_at = sample.finished_at
        if not summary.complete and sum(counts.values()) >= summary.candidates_total:
            # about to call it complete (verified): confirm the candidate count first
            summary.candidates_total = _candidate_totals(cand["submission_id"])["candidates_total"]
        _counts_fields(summary)
        _apply_set_scalars(summary, set_curves, _sizes_of(summary))
        # an UPDATE of the columns this fold changed (the curves of the sets the workload is not
        # in stay as they are: most of the row's bytes)
        changed = [a for a, v in before.items() if getattr(summary, a) != v]
        summary.save(update_fields=None if created else [*changed, "updated_at"])
    if created and cand["submission__kind"] == "trace":
        transaction.on_commit(lambda: ensure_reported(cand["submission_id"]))
    return row


# --------------------------------------------------------------------------------------------
# Full rebuilds
# --------------------------------------------------------------------------------------------

def _save_summary(submission, hardware_id: int, source: str, samples: list[FoldSample], sizes, wmap,
                  totals: Mapping[str, Any]) -> SubmissionSummary:
    mode = INDEPENDENT if submission.sampling == INDEPENDENT else SEQUENTIAL
    summary = (SubmissionSummary.objects.select_for_update()
               .filter(submission=submission, hardware_id=hardware_id, source=source).first()
               or SubmissionSummary(submission=submission, hardware_id=hardware_id, source=source))
    summary.mode = mode
    for k, v in totals.items():
        setattr(summary, k, v)
    states, acc = build(samples)
    rows = summary_from_states(summary, states, acc, wmap, sizes)
    summary.save()
    WorkloadResult.objects.filter(summary=summary).delete()
    WorkloadResult.objects.bulk_create(rows, batch_size=500)
    return summary


def reported_samples(submission_id: int) -> list[FoldSample]:
    from portal.models import Candidate
    out = []
    for wl, index, outcome, speedup, lo, hi in (Candidate.objects.filter(submission_id=submission_id)
                                                .exclude(reported_outcome="")
                                                .values_list("workload_id", "index", "reported_outcome",
                                                             "reported_speedup", "reported_speedup_lo",
                                                             "reported_speedup_hi").order_by()):
        s = sample_from_report(wl, index, outcome, speedup, (lo, hi) if lo is not None else None)
        if s is not None:
            out.append(s)
    return out


def rebuild_reported(submission) -> SubmissionSummary | None:
    """(Re)build the self-reported summary of a submission from its candidates' reported
    outcomes; removes it when nothing is reported."""
    samples = reported_samples(submission.pk)
    with transaction.atomic():
        if not samples:
            SubmissionSummary.objects.filter(submission=submission, source=SubmissionSummary.REPORTED).delete()
            return None
        wmap = workload_set_map({s.workload_id for s in samples})
        return _save_summary(submission, submission.hardware_id, SubmissionSummary.REPORTED, samples,
                             set_sizes(), wmap, _candidate_totals(submission.pk))


def ensure_reported(submission_id: int) -> SubmissionSummary | None:
    """Build the self-reported summary unless it is already built for every candidate."""
    from portal.models import Candidate, Submission
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        return None
    existing = SubmissionSummary.objects.filter(submission=submission, source=SubmissionSummary.REPORTED).first()
    n = Candidate.objects.filter(submission=submission).count()
    if existing is not None and existing.candidates_total == n:
        return existing
    if existing is None and not Candidate.objects.filter(submission=submission).exclude(reported_outcome="").exists():
        return None
    return rebuild_reported(submission)


def rebuild_submission(submission) -> list[SubmissionSummary]:
    """Recompute every summary of ``submission`` from its evaluations (and its reported
    outcomes) through the same folding code as ``refresh_for_evaluation``."""
    by_hw: dict[int, list[FoldSample]] = {submission.hardware_id: []}
    for hw, s in _evaluated_samples(submission.pk):
        by_hw.setdefault(hw, []).append(s)
    sizes = set_sizes()
    wmap = workload_set_map()
    totals = _candidate_totals(submission.pk)
    out = []
    with transaction.atomic():
        SubmissionSummary.objects.filter(submission=submission, source=SubmissionSummary.EVALUATED) \
            .exclude(hardware_id__in=list(by_hw)).delete()
        for hw, samples in by_hw.items():
            out.append(_save_summary(submission, hw, SubmissionSummary.EVALUATED, samples, sizes, wmap, totals))
    reported = rebuild_reported(submission)
    if reported is not None:
        out.append(reported)
    return out


def rebuild_all(submissions=None, progress=None) -> int:
    from portal.models import Submission
    qs = submissions if submissions is not None else Submission.objects.all()
    n = 0
    for sub in qs.order_by("pk").iterator():
        rebuild_submission(sub)
        n += 1
        if progress:
            progress(sub, n)
    return n
