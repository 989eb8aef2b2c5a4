"""Per-configuration results of a multi-configuration workload, as pages and the API show them.

The harness folds a workload's configurations into one verdict and lists them in the record's
``configurations`` (jaxbench/verdict/configurations.py); this module only formats that list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jaxbench.metrics import roofline
from jaxbench.record import format_speedup


def _ms(seconds) -> str:
    return f"{seconds * 1e3:.4g} ms" if isinstance(seconds, int | float) and seconds > 0 else ""


def rows(
    configurations: Sequence[Mapping] | None, costs: Mapping | None = None, hardware: str | None = None
) -> list[dict]:
    """One display row per configuration: name, case, outcome, category, speedup text,
    candidate and XLA times, each time's fraction of the limit (``median_limit``,
    ``baseline_limit``: ``roofline.label``, None without the workload's ``costs`` or the
    ``hardware``'s peaks), and the head of its message; [] for a one-configuration record."""
    out = []
    for c in configurations or ():
        ci = c.get("speedup_ci") or (None, None)
        roof = roofline.of_case(costs, c.get("case"), hardware)
        out.append(
            {
                "name": c.get("name"),
                "case": c.get("case"),
                "outcome": c.get("outcome") or "",
                "category": c.get("error_category") or "",
                "speedup": c.get("speedup"),
                "speedup_lo": ci[0],
                "speedup_hi": ci[1],
                "speedup_text": format_speedup(c.get("speedup"), ci[0], ci[1]) if c.get("speedup") is not None else "",
                "median": _ms(c.get("median_s")),
                "baseline": _ms(c.get("baseline_median_s")),
                "median_limit": roofline.label(roof, c.get("median_s")),
                "baseline_limit": roofline.label(roof, c.get("baseline_median_s")),
                "message": (c.get("message") or "")[:300],
            }
        )
    return out
