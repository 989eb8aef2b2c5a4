"""The gap to the expert kernels: per workload and as a ratio of floored geomeans."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .aggregate import SEQUENTIAL, WorkloadAggregate, _aggs
from .over_sets import floored_geomean, floored_geomean_of
from .per_workload import best_within, workload_speedup

# --------------------------------------------------------------------------------------------
# Gap to expert
# --------------------------------------------------------------------------------------------


def _expert_floor(e: float | None) -> float:
    if e is None:
        return 1.0
    e = float(e)
    if not math.isfinite(e) or e <= 0.0:
        raise ValueError(f"expert speedup must be finite and > 0, got {e!r}")
    return max(1.0, e)


def expert_gaps(
    aggregates: Sequence[WorkloadAggregate | None],
    expert_speedups: Sequence[float | None],
    n: int | None = None,
    mode: str = SEQUENTIAL,
) -> list[float]:
    """Per workload s_w(n) / max(1, expert speedup), aligned with the inputs. An expert speedup
    of None (no expert kernel) counts 1.0, like any workload where XLA would be kept."""
    aggs = _aggs(aggregates)
    if len(aggs) != len(expert_speedups):
        raise ValueError("aggregates and expert speedups must be aligned")
    return [workload_speedup(a, n, mode) / _expert_floor(e) for a, e in zip(aggs, expert_speedups)]


def expert_ratio(
    aggregates: Sequence[WorkloadAggregate | None],
    expert_speedups: Sequence[float | None],
    n: int | None = None,
    mode: str = SEQUENTIAL,
) -> float:
    """Floored geomean of S / floored geomean of the experts on the same set (0.77 = "77% of
    expert"). Equal to the geometric mean of ``expert_gaps``."""
    aggs = _aggs(aggregates)
    if len(aggs) != len(expert_speedups):
        raise ValueError("aggregates and expert speedups must be aligned")
    return floored_geomean(aggs, n, mode) / floored_geomean_of(expert_speedups)


def raw_expert_gaps(
    aggregates: Sequence[WorkloadAggregate | None],
    expert_speedups: Sequence[float | None],
    n: int | None = None,
) -> list[float | None]:
    """Per workload raw best speedup within n / raw expert speedup (both unfloored; sequential
    order), so a kernel slower than the expert is below 1 even when both are below 1 (the
    floored gap reads 1.0 there). None without a correct sample or without an expert kernel."""
    aggs = _aggs(aggregates)
    if len(aggs) != len(expert_speedups):
        raise ValueError("aggregates and expert speedups must be aligned")
    out: list[float | None] = []
    for a, e in zip(aggs, expert_speedups):
        best = best_within(a, n)
        out.append(None if best is None or e is None else best / _expert_raw(e))
    return out


def _expert_raw(e: float) -> float:
    e = float(e)
    if not math.isfinite(e) or e <= 0.0:
        raise ValueError(f"expert speedup must be finite and > 0, got {e!r}")
    return e
