"""Per-workload values at a budget N: the best speedup, s_w(N), the probabilities of the
independent mode (pass@k) and the expected log speedup."""

from __future__ import annotations

import bisect
import functools
import math

from .aggregate import DEFAULT_P, INDEPENDENT, SEQUENTIAL, WorkloadAggregate, _check_mode, _check_n

# --------------------------------------------------------------------------------------------
# Per-workload values
# --------------------------------------------------------------------------------------------


def best_within(agg: WorkloadAggregate | None, n: int | None = None) -> float | None:
    """Raw (unfloored) best speedup of the correct samples with index < n (sequential order);
    None if there is none. n=None: all samples."""
    n = _check_n(n)
    if agg is None or not agg.progression:
        return None
    if n is None:
        return agg.progression[-1][1]
    pos = bisect.bisect_left([i for i, _ in agg.progression], n)  # entries with index < n
    return agg.progression[pos - 1][1] if pos else None


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(a random k-subset of n samples holds at least one of the c
    qualifying ones) = 1 - C(n-c, k) / C(n, k); for k > n the full-sample value
    (1.0 if c > 0 else 0.0). The ratio of exact integers is rounded once."""
    if not (0 <= c <= n) or k < 0:
        raise ValueError(f"need 0 <= c <= n and k >= 0, got n={n}, c={c}, k={k}")
    if k > n:
        return 1.0 if c > 0 else 0.0
    if c == 0 or k == 0:
        return 0.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_curve(n: int, c: int, top: int) -> list[float]:
    """``[pass_at_k(n, c, k) for k in 1..top]``, the same values: the exact binomials are
    carried from one k to the next (C(m, k) = C(m, k - 1) (m - k + 1) / k) instead of computed
    afresh for every k, and each ratio is rounded once, as there."""
    if not (0 <= c <= n) or top < 0:
        raise ValueError(f"need 0 <= c <= n and top >= 0, got n={n}, c={c}, top={top}")
    if c == 0:
        return [0.0] * top
    out = []
    num = den = 1  # C(n - c, k), C(n, k) at k = 0
    for k in range(1, min(top, n) + 1):
        num = num * (n - c - k + 1) // k  # 0 from k = n - c + 1 on
        den = den * (n - k + 1) // k
        out.append(1.0 - num / den)
    return out + [1.0] * (top - len(out))  # k > n: the full-sample value (c > 0)


@functools.lru_cache(maxsize=512)
def _pass_at_k_curve(n: int, c: int, top: int) -> tuple[float, ...]:
    """``pass_at_k_curve`` remembered: it depends on three integers only, and a board's chart
    asks for the same (n, c) of many workloads (n is the sample budget, c a count of lows)."""
    return tuple(pass_at_k_curve(n, c, top))


def solve_probability(agg: WorkloadAggregate | None, n: int | None = None, mode: str = SEQUENTIAL) -> float:
    """Sequential: 1.0 if a correct sample has index < n, else 0.0. Independent: the unbiased
    probability that a random n-subset holds a correct sample."""
    n, mode = _check_n(n), _check_mode(mode)
    if agg is None or agg.n_correct == 0:
        return 0.0
    if n is None:
        return 1.0
    if mode == SEQUENTIAL:
        assert agg.first_correct_index is not None  # set whenever n_correct > 0
        return 1.0 if agg.first_correct_index < n else 0.0
    return pass_at_k(agg.n_samples, agg.n_correct, n)


def fast_probability(
    agg: WorkloadAggregate | None, n: int | None = None, p: float = DEFAULT_P, mode: str = SEQUENTIAL
) -> float:
    """Sequential: 1.0 if a correct sample with index < n is faster than p (its interval's low
    end above p), else 0.0 (for p = 1 from ``first_faster_index``; otherwise from the first
    entry of the lows' progression above p, the first sample whose running best low exceeds
    p). Independent: the unbiased probability that a random n-subset holds such a sample."""
    n, mode = _check_n(n), _check_mode(mode)
    p = float(p)
    if agg is None or agg.n_correct == 0:
        return 0.0
    if mode == INDEPENDENT:
        return pass_at_k(agg.n_samples, _n_fast(agg, p), agg.n_samples if n is None else n)
    first = _first_fast(agg, p)
    if first is None:
        return 0.0
    return 1.0 if n is None or first < n else 0.0


def fast_probabilities(
    agg: WorkloadAggregate | None, top: int, p: float = DEFAULT_P, mode: str = SEQUENTIAL
) -> list[float]:
    """``[fast_probability(agg, n, p, mode) for n in 1..top]``, the aggregate read once (a
    curve's points: the leaderboard's fast_p@N charts for p != 1)."""
    top, mode = _check_n(top) or 0, _check_mode(mode)
    p = float(p)
    if agg is None or agg.n_correct == 0:
        return [0.0] * top
    if mode == INDEPENDENT:
        return list(_pass_at_k_curve(agg.n_samples, _n_fast(agg, p), top))
    first = _first_fast(agg, p)
    if first is None:
        return [0.0] * top
    return [1.0 if first < n else 0.0 for n in range(1, top + 1)]


def _n_fast(agg: WorkloadAggregate, p: float) -> int:
    """Correct samples faster than p (their lows above p)."""
    if p == 1.0:
        return agg.n_faster
    return len(agg.correct_lows) - bisect.bisect_right(agg.correct_lows, p)


def _first_fast(agg: WorkloadAggregate, p: float) -> int | None:
    """The index of the first sample faster than p (sequential order), or None."""
    if p == 1.0:
        return agg.first_faster_index
    lows = [s for _, s in agg.low_progression]
    pos = bisect.bisect_right(lows, p)  # first entry with low > p
    return agg.low_progression[pos][0] if pos < len(lows) else None


def _n_above_one(agg: WorkloadAggregate | None) -> int:
    """Correct samples whose POINT speedup is above 1 (the geomean's non-zero logarithms; a
    tie's point may be one of them)."""
    if agg is None:
        return 0
    return len(agg.correct_speedups) - bisect.bisect_right(agg.correct_speedups, 1.0)


def expected_log_speedup(agg: WorkloadAggregate | None, n: int | None = None, mode: str = SEQUENTIAL) -> float:
    """E[ln s_w(n)]. Sequential: exactly ln s_w(n). Independent: the expectation over a uniformly
    random n-subset of the n_samples samples, ``sum_k ln(v_k) C(k-1, n-1) / C(n_samples, n)``
    over the floored values sorted ascending (see the module docstring); n >= n_samples or
    None gives the full-sample value."""
    n, mode = _check_n(n), _check_mode(mode)
    above = _n_above_one(agg)
    if above == 0:
        return 0.0
    if mode == SEQUENTIAL:
        best = best_within(agg, n)
        return math.log(best) if best is not None and best > 1.0 else 0.0
    assert agg is not None  # above > 0
    total = agg.n_samples
    if n is None or n >= total:
        return math.log(agg.correct_speedups[-1])
    if n == 0:
        return 0.0
    faster = agg.correct_speedups[len(agg.correct_speedups) - above :]
    denom = math.comb(total, n)
    first_rank = total - len(faster)  # faster[j] has 1-based rank first_rank + j + 1
    return math.fsum(math.log(v) * (math.comb(first_rank + j, n - 1) / denom) for j, v in enumerate(faster))


def workload_speedup(agg: WorkloadAggregate | None, n: int | None = None, mode: str = SEQUENTIAL) -> float:
    """Sequential: s_w(n) = max(1, best correct speedup with index < n), 1.0 if none.
    Independent: exp(E[ln s_w(n)]), the geometric expectation over random n-subsets."""
    if _check_mode(mode) == SEQUENTIAL:
        best = best_within(agg, n)
        return 1.0 if best is None else max(1.0, best)
    return math.exp(expected_log_speedup(agg, n, mode))
