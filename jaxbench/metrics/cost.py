"""Cost per solved workload."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import cast

# --------------------------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------------------------


def per_solved(total: float | Iterable[float | None] | None, n_solved: float) -> float | None:
    """Tokens (or cost) per solved workload: sum / n_solved. ``total`` is a sum or the
    per-sample values; None when not reported (None, no values, or any sample missing its
    value, since a partial sum would understate the cost) or when n_solved is 0."""
    if total is None:
        return None
    values: list[float | None]
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        values = [total]
    else:
        # mypy keeps bool here (a subtype of int); a bool total is not iterable: list() raises TypeError
        values = list(cast("Iterable[float | None]", total))
        if not values or any(v is None for v in values):
            return None
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"token/cost values must be finite and >= 0, got {v!r}")
    if not n_solved or n_solved <= 0:
        return None
    return math.fsum(cast("list[float]", values)) / n_solved  # None and non-numbers raised above


def per_dollar(share: float | None, cost: float | None) -> float | None:
    """fast@N per dollar: the share (fast@N) over the cost reported for it; None when either is
    not known or the cost is 0 (no ratio over $0)."""
    if share is None or cost is None or cost <= 0:
        return None
    return share / cost
