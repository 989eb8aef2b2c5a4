"""Metrics over a workload set: floored geomean, solved, fast_p@N, their curves over N and the
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
from .per_workload import expected_log_speedup, fast_probability, solve_probability

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
    """[(N, fast_p@N) for N = 1..n_max]; n_max defaults to ``curve_length``."""
    return _curve(lambda a, n: fast_p(a, n, p, mode), aggregates, mode, n_max)


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
