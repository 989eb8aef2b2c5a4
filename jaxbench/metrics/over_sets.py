"""Metrics over a workload set: floored and unfloored geomean, solved, fast_p@N, their curves over N and the
outcome shares."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

from .aggregate import (
    API_RUNTIME_FAILURE_OUTCOMES,
    CORRECT_OUTCOMES,
    DEFAULT_P,
    OUTCOMES,
    SEQUENTIAL,
    WorkloadAggregate,
    _aggs,
    _check_mode,
    _check_n,
)
from .per_workload import best_within, expected_log_speedup, fast_probabilities, fast_probability, solve_probability

# --------------------------------------------------------------------------------------------
# Workload-set metrics
# --------------------------------------------------------------------------------------------


def floored_geomean(
    aggregates: Iterable[WorkloadAggregate | None], n: int | None = None, mode: str = SEQUENTIAL
) -> float:
    """exp(mean over W of ln s_w(n)); every workload floored at 1, none-sampled ones count 1.0.
    Independent mode: the expected floored geomean exp(mean over W of E[ln s_w(n)])."""
    aggs = _aggs(aggregates)
    return math.exp(math.fsum(expected_log_speedup(a, n, mode) for a in aggs) / len(aggs))


def floored_geomean_of(speedups: Iterable[float | None]) -> float:
    """Floored geomean of plain per-workload speedups (e.g. the expert kernels'): each value is
    floored at 1; None (no kernel) counts 1.0."""
    logs = []
    for s in speedups:
        if s is None:
            logs.append(0.0)
            continue
        s = float(s)
        if not math.isfinite(s) or s <= 0.0:
            raise ValueError(f"speedup must be finite and > 0, got {s!r}")
        logs.append(math.log(s) if s > 1.0 else 0.0)
    if not logs:
        raise ValueError("the workload set is empty")
    return math.exp(math.fsum(logs) / len(logs))


def upstream_score(floored_geomean: float, size: int, attempted: int | float) -> float | None:
    """The public suite's own agent score (its evaluation utilities): the geometric mean, over
    the workloads ATTEMPTED (at least one kernel evaluated), of each one's speedup floored at 1;
    None when nothing was attempted. From the set's ``floored_geomean`` over all ``size``
    workloads (those not attempted count 1.0 there, adding 0 to its log sum): the log sum is
    ``size * ln(floored_geomean)``, divided here by the attempted workloads only, so the score
    is never below the floored geomean and leaving a workload out costs nothing."""
    if attempted <= 0 or size <= 0:
        return None
    if not floored_geomean >= 1.0 - 1e-9:  # 1e-9: the float error of exp(log sum / size)
        raise ValueError(f"a floored geomean is >= 1, got {floored_geomean!r}")
    # a count kept from before a workload left the set may exceed it until the summary is rebuilt
    return math.exp(max(0.0, math.log(floored_geomean)) * size / min(attempted, size))


def solved(aggregates: Iterable[WorkloadAggregate | None], n: int | None = None, mode: str = SEQUENTIAL) -> int | float:
    """Sequential: number of workloads with a correct sample with index < n (an int).
    Independent: the expected number over random n-subsets (a float)."""
    aggs = _aggs(aggregates)
    if _check_mode(mode) == SEQUENTIAL:
        return sum(int(solve_probability(a, n, mode)) for a in aggs)
    return math.fsum(solve_probability(a, n, mode) for a in aggs)


def fast_p(
    aggregates: Iterable[WorkloadAggregate | None], n: int | None = None, p: float = DEFAULT_P, mode: str = SEQUENTIAL
) -> float:
    """fast_p@n: fraction of W with a correct sample (index < n) whose speedup > p; in
    independent mode the mean over W of the unbiased per-workload estimate."""
    aggs = _aggs(aggregates)
    return math.fsum(fast_probability(a, n, p, mode) for a in aggs) / len(aggs)


def curve_length(aggregates: Iterable[WorkloadAggregate | None], mode: str = SEQUENTIAL) -> int:
    """The N up to which curves run by default: sequential, the largest index folded + 1;
    independent, the largest sample count of a workload."""
    aggs = _aggs(aggregates)
    if _check_mode(mode) == SEQUENTIAL:
        return max((a.max_index + 1 for a in aggs if a.max_index is not None), default=0)
    return max(a.n_samples for a in aggs)


_T = TypeVar("_T")


def _curve(
    fn: Callable[[list[WorkloadAggregate], int], _T],
    aggregates: Iterable[WorkloadAggregate | None],
    mode: str,
    n_max: int | None,
) -> list[tuple[int, _T]]:
    aggs = _aggs(aggregates)
    top = curve_length(aggs, mode) if n_max is None else _check_n(n_max)
    assert top is not None  # _check_n returns n_max itself (not None) or raises
    return [(n, fn(aggs, n)) for n in range(1, top + 1)]


def fast_p_curve(
    aggregates: Iterable[WorkloadAggregate | None],
    p: float = DEFAULT_P,
    mode: str = SEQUENTIAL,
    n_max: int | None = None,
) -> list[tuple[int, float]]:
    """[(N, fast_p@N) for N = 1..n_max]; n_max defaults to ``curve_length``. The values of
    ``fast_p`` at each N, each workload's aggregate read once for the whole curve (fast_p at
    each N read it again for every point: 144 x 50 of them for one row of the board's chart)."""
    aggs = _aggs(aggregates)
    top = curve_length(aggs, mode) if n_max is None else _check_n(n_max)
    assert top is not None  # _check_n returns n_max itself (not None) or raises
    per = [fast_probabilities(a, top, p, mode) for a in aggs]
    return [(n, math.fsum(col) / len(aggs)) for n, col in zip(range(1, top + 1), zip(*per), strict=True)]


def solved_curve(
    aggregates: Iterable[WorkloadAggregate | None], mode: str = SEQUENTIAL, n_max: int | None = None
) -> list[tuple[int, int | float]]:
    """[(N, solved(N)) for N = 1..n_max]."""
    return _curve(lambda a, n: solved(a, n, mode), aggregates, mode, n_max)


def geomean_curve(
    aggregates: Iterable[WorkloadAggregate | None], mode: str = SEQUENTIAL, n_max: int | None = None
) -> list[tuple[int, float]]:
    """[(N, floored geomean(N)) for N = 1..n_max]."""
    return _curve(lambda a, n: floored_geomean(a, n, mode), aggregates, mode, n_max)


# --------------------------------------------------------------------------------------------
# Outcome shares
# --------------------------------------------------------------------------------------------


def outcome_counts(aggregates: Iterable[WorkloadAggregate | None]) -> dict[str, int]:
    """Counts by outcome summed over the workload set (every outcome present, maybe 0)."""
    totals = [0] * len(OUTCOMES)
    for a in _aggs(aggregates):
        for i, c in enumerate(a.counts):
            totals[i] += c
    return dict(zip(OUTCOMES, totals))


def outcome_shares(aggregates: Iterable[WorkloadAggregate | None]) -> dict[str, float] | None:
    """Share of all samples per outcome (sums to 1); None when there are no samples."""
    counts = outcome_counts(aggregates)
    total = sum(counts.values())
    return None if total == 0 else {o: c / total for o, c in counts.items()}


def per_sample_correctness(aggregates: Iterable[WorkloadAggregate | None]) -> float | None:
    """Correct samples / all samples over the set; None when there are no samples."""
    counts = outcome_counts(aggregates)
    total = sum(counts.values())
    return None if total == 0 else sum(counts[o] for o in CORRECT_OUTCOMES) / total


def api_runtime_failure_share(aggregates: Iterable[WorkloadAggregate | None]) -> float | None:
    """(compile_error + runtime_error) / all samples: our reading of the study's "failed at
    compilation or first execution from API/runtime problems". None when there are no samples."""
    counts = outcome_counts(aggregates)
    total = sum(counts.values())
    return None if total == 0 else sum(counts[o] for o in API_RUNTIME_FAILURE_OUTCOMES) / total


# --------------------------------------------------------------------------------------------
# Unfloored geomean (a companion of the study's floored one)
# --------------------------------------------------------------------------------------------


def unfloored_log_sum(agg: WorkloadAggregate | None, n: int | None = None, mode: str = SEQUENTIAL) -> float:
    """A workload's term of the unfloored geomean: ln of its raw best correct speedup within n
    (0.0 when none). Independent: E[ln best; solved], the expectation over random n-subsets of
    ln(best correct speedup) on the subsets that hold a correct sample (0 on the others)."""
    n, mode = _check_n(n), _check_mode(mode)
    if agg is None or agg.n_correct == 0:
        return 0.0
    if mode == SEQUENTIAL:
        best = best_within(agg, n)
        return 0.0 if best is None else math.log(best)
    total = agg.n_samples
    if n is None or n >= total:
        return math.log(agg.correct_speedups[-1])
    if n == 0:
        return 0.0
    # the non-correct samples rank below every correct one: they are never the best
    first_rank = total - agg.n_correct
    denom = math.comb(total, n)
    return math.fsum(
        math.log(v) * (math.comb(first_rank + j, n - 1) / denom) for j, v in enumerate(agg.correct_speedups)
    )


def unfloored_geomean(
    aggregates: Iterable[WorkloadAggregate | None], n: int | None = None, mode: str = SEQUENTIAL
) -> float | None:
    """exp(sum of ln best_w / solved) over the workloads solved within n: the geomean of the raw
    (unfloored, possibly < 1) best speedups of the correct workloads. A workload without a
    correct sample contributes nothing (neither a term nor a count); None when none is solved.
    Independent: exp(sum_w E[ln best_w; solved_w] / sum_w P(solved_w)) (exact for n >= all)."""
    aggs = _aggs(aggregates)
    count = math.fsum(solve_probability(a, n, mode) for a in aggs)
    if count <= 0.0:
        return None
    return math.exp(math.fsum(unfloored_log_sum(a, n, mode) for a in aggs) / count)


def unfloored_geomean_of(speedups: Iterable[float | None]) -> float | None:
    """Geomean of plain speedups, unfloored; None entries (no kernel) are left out; None when
    every entry is None."""
    logs = []
    for s in speedups:
        if s is None:
            continue
        s = float(s)
        if not math.isfinite(s) or s <= 0.0:
            raise ValueError(f"speedup must be finite and > 0, got {s!r}")
        logs.append(math.log(s))
    return math.exp(math.fsum(logs) / len(logs)) if logs else None
