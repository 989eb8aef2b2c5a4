"""One verdict for a multi-configuration workload from its configurations' verdicts (pure).

A workload may declare several input configurations per profile (``Workload.configurations``);
the harness checks and times each as its own case (``profile/configuration``) and this module
folds their records into the workload's one record:

* correct only when every configuration is correct; otherwise the first configuration that is
  not decides the outcome, category and message (prefixed with its name), and the
  configurations after it are not run (``"not_run"``): a kernel wrong on one shape is wrong;
* the speedup is the geometric mean of the configurations' speedups, its interval the
  geometric means of their interval ends: it contains the geomean whenever every
  configuration's interval contains its own speedup; faster/slower/tie from that interval
  exactly as for one configuration (``record.speed_outcome``);
* held for review when any configuration is, or when the geomean is above ``REVIEW_SPEEDUP``;
* ``configurations`` lists every configuration with its own outcome, speedup, interval and
  times, in declaration order: what the pages and the API show per configuration.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

from ..record import CORRECT_OUTCOMES, REVIEW_SPEEDUP, format_speedup, speed_outcome

Record = dict[str, Any]

NOT_RUN = "not_run"
# per-configuration keys copied from each case's record
_KEEP = (
    "outcome",
    "error_category",
    "message",
    "phase",
    "speedup",
    "speedup_ci",
    "baseline_median_s",
    "held_for_review",
    "max_abs_err",
    "max_rel_err",
    "has_pallas_call",
    "seeds",
    "roofline",
)


def geomean(values: Sequence[float]) -> float:
    if not values or any(v <= 0 for v in values):
        raise ValueError("geomean needs positive values")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def entry(name: str, case: str, rec: Record | None) -> Record:
    """The ``configurations`` entry of one case (``rec`` None: not run)."""
    if rec is None:
        return {"name": name, "case": case, "outcome": NOT_RUN, "message": "not run: an earlier configuration failed"}
    out: Record = {"name": name, "case": case}
    out.update({k: copy.deepcopy(rec.get(k)) for k in _KEEP})
    timing = rec.get("timing") or {}
    out["median_s"] = timing.get("median_s")
    share = rec.get("pallas_share") or {}
    out["outside_share"] = share.get("outside_share")
    out["total_s"] = (rec.get("phases") or {}).get("total_s")
    return out


def geomean_timing(records: Sequence[Record], key: str) -> Record | None:
    """A Timing dict standing for several cases' ``key`` timings: their medians' geomean."""
    raw = [(r.get(key) or {}).get("median_s") for r in records]
    medians = [float(m) for m in raw if isinstance(m, int | float) and m > 0]
    if len(medians) != len(raw):
        return None
    return {
        "median_s": geomean(medians),
        "method": "geomean_over_configurations",
        "n": sum(int((r.get(key) or {}).get("n") or 0) for r in records),
        "samples": [],
        "spread": None,
    }


def combine(profile: str, cases: Sequence[tuple[str, str, Record | None]]) -> Record:
    """The workload's record from ``cases``: ``(configuration name, case, record or None when
    not run)`` in declaration order; at least one record. The first non-correct record decides;
    with every configuration correct, the geomeans do."""
    ran = [(name, case, rec) for name, case, rec in cases if rec is not None]
    if not ran:
        raise ValueError("no configuration ran")
    failed = next(((n, c, r) for n, c, r in ran if r.get("outcome") not in CORRECT_OUTCOMES), None)
    deciding = failed or ran[-1]
    out = copy.deepcopy(deciding[2])
    out["profile"] = profile
    out["configuration"] = None
    out["configurations"] = [entry(n, c, r) for n, c, r in cases]
    out["roofline"] = None  # each configuration has its own (its entry's); their geomean has none
    # what every case ran under, as one record would say it
    out["seeds"] = {c: r.get("seeds") for _, c, r in ran}
    notes = list(out.get("notes") or [])
    for name, _, rec in ran:
        if rec is not deciding[2]:
            notes += [f"{name}: {n}" for n in rec.get("notes") or []]
    out["notes"] = notes
    out["held_for_review"] = any(bool(r.get("held_for_review")) for _, _, r in ran)
    if failed is not None:
        name = failed[0]
        out["message"] = f"configuration {name} ({len(ran)} of {len(cases)} run): {failed[2].get('message') or ''}"
        for key in ("speedup", "speedup_ci", "timing", "baseline_timing", "baseline_median_s"):
            out[key] = None
        return out
    recs = [r for _, _, r in ran]
    speedups = [r["speedup"] for r in recs]
    lows = [r["speedup_ci"][0] for r in recs]
    highs = [r["speedup_ci"][1] for r in recs]
    sp, lo, hi = geomean(speedups), geomean(lows), geomean(highs)
    out["speedup"] = sp
    out["speedup_ci"] = [lo, hi]
    out["speedup_method"] = {"method": "geomean_over_configurations", "n": len(recs)}
    out["outcome"] = speed_outcome(lo, hi)
    out["timing"] = geomean_timing(recs, "timing")
    out["baseline_timing"] = geomean_timing(recs, "baseline_timing")
    out["baseline_median_s"] = (out["baseline_timing"] or {}).get("median_s")
    out["max_abs_err"] = max((r.get("max_abs_err") or 0.0) for r in recs)
    out["max_rel_err"] = max((r.get("max_rel_err") or 0.0) for r in recs)
    if sp > REVIEW_SPEEDUP:
        out["held_for_review"] = True
    per = ", ".join(f"{n} {format_speedup(r['speedup'])}" for n, _, r in ran)
    out["message"] = (
        f"correct on all {len(recs)} configurations; geometric mean "
        f"{format_speedup(sp, lo, hi)}: {out['outcome'].replace('correct_', '')} (per configuration: {per})"
    )
    return out


def public_rows(configurations: Sequence[Record] | None) -> list[Record] | None:
    """What the API lists per configuration (None for a one-configuration record)."""
    if not configurations:
        return None
    keys = ("name", "case", "outcome", "error_category", "speedup", "speedup_ci", "median_s", "baseline_median_s")
    return [{k: c.get(k) for k in keys} for c in configurations]
