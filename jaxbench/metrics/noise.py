"""Timing noise: spreads, speedup intervals, the geomean's interval and the tie rule."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from .over_sets import floored_geomean_of

# --------------------------------------------------------------------------------------------
# Timing noise
# --------------------------------------------------------------------------------------------


def relative_spread(times: Sequence[float], method: str = "iqr") -> float:
    """Relative half-width of a set of timings around their median m.

    * ``'iqr'`` (default): (Q3 - Q1) / (2 m), quartiles by linear interpolation between order
      statistics (``statistics.quantiles(method='inclusive')``, numpy's default). Robust to the
      odd outlier iteration, and wider than the standard error of the median, i.e. it covers
      run-to-run drift as well: a deliberately conservative noise band.
    * ``'minmax'``: (max - min) / (2 m), the most conservative.
    One timing gives 0.0.
    """
    xs = [float(t) for t in times]
    if not xs:
        raise ValueError("no timings")
    if any(not math.isfinite(t) or t <= 0.0 for t in xs):
        raise ValueError("timings must be finite and > 0")
    if len(xs) == 1:
        return 0.0
    m = statistics.median(xs)
    if method == "iqr":
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
        return (q3 - q1) / (2.0 * m)
    if method == "minmax":
        return (max(xs) - min(xs)) / (2.0 * m)
    raise ValueError(f"unknown spread method {method!r}")


def timing_summary(times: Sequence[float], method: str = "iqr") -> tuple[float, float]:
    """(median, relative spread) of a timing series, as ``speedup_interval`` takes them."""
    return statistics.median([float(t) for t in times]), relative_spread(times, method)


def speedup_interval(
    baseline_median: float, baseline_spread: float, cand_median: float, cand_spread: float
) -> tuple[float, float]:
    """Interval of speedup = t_XLA / t_candidate given each time as median m and relative
    half-width r (``relative_spread``): the time lies in [m(1 - r), m(1 + r)], so

        low  = m_b (1 - r_b) / (m_c (1 + r_c)),   high = m_b (1 + r_b) / (m_c (1 - r_c)).

    Interval arithmetic (worst case), not a confidence interval. If r_b >= 1 the low end is
    0.0; if r_c >= 1 the high end is +inf (the noise swamps the measurement)."""
    for name, v in (("baseline_median", baseline_median), ("cand_median", cand_median)):
        if not math.isfinite(v) or v <= 0.0:
            raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    for name, v in (("baseline_spread", baseline_spread), ("cand_spread", cand_spread)):
        if not math.isfinite(v) or v < 0.0:
            raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
    low = max(0.0, baseline_median * (1.0 - baseline_spread)) / (cand_median * (1.0 + cand_spread))
    if cand_spread >= 1.0:
        high = math.inf
    else:
        high = baseline_median * (1.0 + baseline_spread) / (cand_median * (1.0 - cand_spread))
    return low, high


def geomean_interval(intervals: Iterable[tuple[float, float] | None]) -> tuple[float, float]:
    """Interval of the floored geomean given one (low, high) speedup interval per workload of W
    (the interval of the sample that defines s_w; None for a workload with no correct sample,
    which is exactly 1). Both ends are floored at 1 per workload; as the floored geomean is
    monotone in every s_w, its interval is exactly [G(lows), G(highs)]."""
    lows, highs = [], []
    for iv in intervals:
        if iv is None:
            lows.append(1.0)
            highs.append(1.0)
            continue
        lo, hi = float(iv[0]), float(iv[1])
        if math.isnan(lo) or math.isnan(hi) or math.isinf(lo) or lo < 0.0 or hi < lo:
            raise ValueError(f"bad interval {iv!r}")
        lows.append(lo)
        highs.append(hi)
    if not lows:
        raise ValueError("the workload set is empty")
    if any(math.isinf(h) and h > 1 for h in highs):
        return floored_geomean_of(lows), math.inf
    return floored_geomean_of(lows), floored_geomean_of(highs)


def tied(row_a: Sequence[float], row_b: Sequence[float]) -> bool:
    """Two leaderboard rows, given as their geomean intervals (low, high), are tied when the
    closed intervals overlap: low_a <= high_b and low_b <= high_a. For symmetric intervals
    (centre c, half-width h) this is the same as |c_a - c_b| <= h_a + h_b: the difference is
    within the combined noise. Touching intervals count as tied (ties are shared ranks, so the
    benefit of the doubt goes to the lower row)."""
    lo_a, hi_a = float(row_a[0]), float(row_a[1])
    lo_b, hi_b = float(row_b[0]), float(row_b[1])
    if hi_a < lo_a or hi_b < lo_b:
        raise ValueError("an interval must have low <= high")
    return lo_a <= hi_b and lo_b <= hi_a
