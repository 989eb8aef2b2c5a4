"""Template filters of the run-log partial (``templates/leaderboard/_run_log.html``)."""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def dur(value) -> str:
    """A duration in seconds, readable at every scale: ``2.31 s``, ``4.2 ms``, ``35 µs``; "" for none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return ""
    v = float(value)
    if v >= 100:
        return f"{v:.0f} s"
    if v >= 1:
        return f"{v:.2f} s"
    if v >= 1e-3:
        return f"{v * 1e3:.1f} ms"
    if v > 0:
        return f"{v * 1e6:.0f} µs"
    return "0 s"
