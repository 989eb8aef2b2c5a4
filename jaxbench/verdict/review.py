"""Held means held (TRUST.md 6): the rules for a result the harness holds for review.

The harness sets ``held_for_review`` in a correct record for each reason :func:`hold_reasons`
gives (the upper bound of its speedup's 95% interval above ``REVIEW_SPEEDUP``; a Pallas share
that passes the rule only narrowly or with a kernel run only conditionally; a median faster than
the hardware's roofline allows) and when the baseline guard's re-measurement could not settle
the pairing (``harness.speed``). Such a result is not ranked, not counted in fast@N and not
shown as faster until a staff member accepts it; a rejected one becomes ``rejected``
(``reward_hack``).

Pure functions over plain values, so that every ranking query (aggregates, fast@N, boards,
charts, exports, progress counts) and every public view asks the same question the same way.
The review state of an evaluation is one of :data:`STATES`:

* ``""``: nothing to review (the harness did not hold it);
* ``held``: held, waiting for a staff member;
* ``accepted``: a staff member accepted it: it counts as its measured verdict;
* ``rejected``: a staff member rejected it: its outcome is ``rejected`` (``reward_hack``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..metrics import roofline as roofline_metrics
from ..record import CORRECT_OUTCOMES, REVIEW_SPEEDUP, Outcome, format_speedup

NONE, HELD, ACCEPTED, REJECTED = "", "held", "accepted", "rejected"
STATES: tuple[str, ...] = (NONE, HELD, ACCEPTED, REJECTED)
LABELS = {NONE: "", HELD: "held for review", ACCEPTED: "accepted on review", REJECTED: "rejected on review"}
# what a held row shows instead of its outcome (pages, API, CLI): never a "faster"
HELD_OUTCOME = "held_for_review"
HELD_LABEL = LABELS[HELD]
# the outcome and category a rejected review gives (its measured verdict stays in the record)
REJECTED_OUTCOME = Outcome.REJECTED
REJECTED_CATEGORY = "reward_hack"
# the record's keys that carry the measured speed: withheld from public views of a held row
SPEED_KEYS = (
    "outcome",
    "speedup",
    "speedup_ci",
    "message",
    "timing",
    "baseline_timing",
    "baseline_median_s",
    "cached_baseline_median_s",
)
CONFIGURATION_SPEED_KEYS = ("outcome", "speedup", "speedup_ci", "message", "median_s", "baseline_median_s")


# A Pallas share that passes the rule narrowly is held (hold_reasons): above the larger of
# SHARE_REVIEW_FRACTION of the threshold and the threshold less SHARE_REVIEW_POINTS. For the
# default 10% threshold that is above 8%; for 3p's 75% allowance above 73%. Every honest kernel
# measured (pallas_share.py's table: at most 0.19% outside 3p, 3p at most 71.3%) stays below.
SHARE_REVIEW_FRACTION = 0.8
SHARE_REVIEW_POINTS = 0.02


# A correct result whose median is above this fraction of the hardware's limit (faster than the
# roofline allows for the workload's cost: metrics/roofline.py) is held (hold_reasons). Below the
# physical floor, the roofline x FLOOR_SLACK (verdict/rules.py: half of it on accelerators), the
# timing gate rejects it as impossible; between the floor and the roofline it is held. Targets
# without sourced peaks (cpu) have no roofline: nothing is held on it for this.
LIMIT_REVIEW_FRACTION = 1.0


def share_review_bar(threshold: float) -> float:
    """The share of the workload's FLOPs outside Pallas above which a passing result is held:
    the larger of :data:`SHARE_REVIEW_FRACTION` x ``threshold`` and ``threshold`` less
    :data:`SHARE_REVIEW_POINTS` (a margin of 20% of the threshold, at most 2 points)."""
    return max(SHARE_REVIEW_FRACTION * threshold, threshold - SHARE_REVIEW_POINTS)


def _finite(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _interval(ci: object) -> tuple[float | None, float | None]:
    """``[lo, hi]`` as two numbers (NaN and infinities kept), else (None, None)."""
    if not isinstance(ci, (list, tuple)) or len(ci) != 2:
        return None, None
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in ci):
        return None, None
    return float(ci[0]), float(ci[1])


def _pct(share: float) -> str:
    return f"{100.0 * share:.1f}%"


def hold_reasons(
    outcome: str,
    speedup: float | None,
    speedup_ci: Sequence[float] | None,
    pallas_share: Mapping[str, Any] | None,
    *,
    require_pallas: bool = True,
    review_speedup: float = REVIEW_SPEEDUP,
    roofline: Mapping[str, Any] | None = None,
    median_s: float | None = None,
) -> list[str]:
    """Why the harness holds a result for review (TRUST.md 6), each reason with its figures;
    [] when it is not held. Only a correct ``outcome`` is ever held (a failure counts as is).

    * **The interval, not the point**: held when the upper bound of the speedup's 95% interval
      (``speedup_ci[1]``) is above ``review_speedup`` (:data:`~jaxbench.record.REVIEW_SPEEDUP`,
      10x), whatever the median. An upper bound that is not a finite number counts as above
      it; a record without an interval (timed before intervals existed) is judged on its median.
    * **A suspicious Pallas share** (``pallas_share``: ``pallas_share.assess_artifact``'s dict),
      only where the share rule applies (``require_pallas``) and the result passed it
      (``ok``): held when the share of the workload's FLOPs outside the Pallas kernels
      (``outside_share``) is above :func:`share_review_bar` of its ``threshold`` (within 20% of
      the threshold, at most 2 points: above 8% of the default 10%), and held when any Pallas
      kernel call runs only inside a conditional branch or a loop that may not run
      (``kernels_conditional`` > 0, beside the unconditional one the rule requires; no honest
      kernel measured has one).
    * **Faster than the roofline**: held when the candidate's median ``median_s`` is above
      :data:`LIMIT_REVIEW_FRACTION` (100%) of the limit of ``roofline`` (the record's
      ``roofline``: :meth:`~jaxbench.metrics.roofline.Roofline.as_dict`, None where the target's
      peaks are unknown), the reason naming the times, the cost, the peaks and their source.
      Exactly at the roofline is not above it.

    Every reason contains "held for review" (:func:`reasons` finds them in the notes)."""
    if outcome not in CORRECT_OUTCOMES:
        return []
    out: list[str] = []
    lo, hi = _interval(speedup_ci)
    point = _finite(speedup)
    if hi is not None:
        top = _finite(hi)
        if top is None or top > review_speedup:
            shown = format_speedup(point, lo, hi) if point is not None else f"upper bound {hi}"
            if point is not None and point > review_speedup:
                out.append(f"speedup above {review_speedup:g}x ({shown}, 95% interval): held for review")
            else:
                out.append(
                    f"the upper bound of the speedup's 95% interval is above {review_speedup:g}x, its median "
                    f"is not ({shown}): held for review"
                )
    elif point is not None and point > review_speedup:
        out.append(f"speedup above {review_speedup:g}x ({format_speedup(point)}, no interval): held for review")
    share = pallas_share if isinstance(pallas_share, Mapping) else None
    if require_pallas and share is not None and share.get("ok"):
        value, threshold = _finite(share.get("outside_share")), _finite(share.get("threshold"))
        if value is not None and threshold is not None:
            bar = share_review_bar(threshold)
            if bar < value <= threshold:
                out.append(
                    f"{_pct(value)} of the workload's FLOPs run outside Pallas kernels, within the review "
                    f"margin of the {_pct(threshold)} limit (above {_pct(bar)}): held for review"
                )
        conditional = share.get("kernels_conditional")
        if isinstance(conditional, int) and not isinstance(conditional, bool) and conditional > 0:
            out.append(
                f"{conditional} Pallas kernel call(s) run only inside a conditional branch or a loop "
                f"that may not run (besides {share.get('kernels_unconditional', '?')} unconditional): "
                "held for review"
            )
    roof = roofline_metrics.Roofline.from_dict(roofline)
    fraction = roof.fraction(median_s) if roof else None
    if roof is not None and fraction is not None and fraction > LIMIT_REVIEW_FRACTION:
        out.append(
            f"the median {roofline_metrics.seconds(float(median_s or 0))} is {roofline_metrics.percent(fraction)} "
            f"of the hardware's limit, faster than its roofline allows for this workload's cost "
            f"({roofline_metrics.explain(roof)}): held for review"
        )
    return out


def state_from_record(record: Mapping[str, Any] | None, outcome: str) -> str:
    """The review state a freshly stored verdict starts in: a review already recorded in the
    record (a verdict reused for identical code keeps it), else ``held`` when the harness held
    a correct result, else none. A held flag on a failed outcome holds nothing: the failure
    counts as it is."""
    record = record or {}
    review = record.get("review")
    if isinstance(review, Mapping) and review.get("state") in (ACCEPTED, REJECTED):
        return str(review["state"])
    if record.get("held_for_review") and outcome in CORRECT_OUTCOMES:
        return HELD
    return NONE


def counts_for_ranking(review: str) -> bool:
    """Whether an evaluation's verdict may count in any ranking (aggregates, fast@N, boards,
    charts, exports, progress counts of faster samples). A held one does not: it counts neither
    as correct-faster nor as ranked until accepted. Rejected rows count as what they now are,
    ``rejected`` samples."""
    return review != HELD


def is_held(review: str) -> bool:
    return review == HELD


def shown_outcome(outcome: str, review: str) -> str:
    """The outcome a public view shows: :data:`HELD_OUTCOME` for a held row, else its own."""
    return HELD_OUTCOME if review == HELD else outcome


def public_record(record: Mapping[str, Any] | None, review: str) -> dict[str, Any]:
    """The record as a public view shows it: a held row's speed keys withheld (each None, and
    ``outcome`` :data:`HELD_OUTCOME`), so nothing public shows it as faster before a review;
    a reviewed row's review without the reviewer's name."""
    rec = dict(record or {})
    if isinstance(rec.get("review"), Mapping):  # who reviewed it is for staff (the review page, the admin)
        rec["review"] = {k: v for k, v in rec["review"].items() if k != "by"}
    if review != HELD:
        return rec
    for k in SPEED_KEYS:
        if k in rec:
            rec[k] = None
    if rec.get("configurations"):  # a multi-configuration record: each configuration's speed too
        rec["configurations"] = [
            {**{k: (None if k in CONFIGURATION_SPEED_KEYS else v) for k, v in c.items()}, "outcome": HELD_OUTCOME}
            for c in rec["configurations"]
        ]
    rec["outcome"] = HELD_OUTCOME
    rec["message"] = f"{HELD_LABEL}: {reasons(record)[0] if reasons(record) else 'the harness held this result'}"
    return rec


def reasons(record: Mapping[str, Any] | None) -> list[str]:
    """Why the harness held a result: its notes that say so (:func:`hold_reasons`' reasons, the
    baseline guard's message), in order."""
    notes = (record or {}).get("notes") or []
    out = [str(n) for n in notes if "held for review" in str(n) or "baseline ran" in str(n)]
    if (record or {}).get("baseline_source") == "interleaved+alone" and not any("baseline ran" in n for n in out):
        out.append("the baseline guard could not settle the side-by-side pairing (interleaved+alone)")
    return out


def rejected_record(record: Mapping[str, Any], review: Mapping[str, Any]) -> dict[str, Any]:
    """The record of a rejected review: outcome ``rejected`` and error category
    :data:`REJECTED_CATEGORY` (``reward_hack``), the staff member's note as its message, and
    the measured verdict kept under ``review["original"]`` (every other key unchanged: nothing
    is lost). A multi-configuration record's correct configurations are rejected the same way
    (outcome, ``reward_hack``, no speed: a page or the API listing them never shows one as
    faster), their measured entries kept under ``review["original"]["configurations"]``."""
    rec = dict(record)
    original = {k: record.get(k) for k in ("outcome", "error_category", "message", "speedup", "speedup_ci")}
    note = str(review.get("note") or "").strip()
    rec["outcome"] = REJECTED_OUTCOME.value
    rec["error_category"] = REJECTED_CATEGORY
    rec["message"] = "rejected on review (reward hack)" + (f": {note}" if note else "")
    configurations = record.get("configurations")
    if isinstance(configurations, list) and configurations:
        original["configurations"] = configurations
        rec["configurations"] = [_rejected_configuration(c, rec["message"]) for c in configurations]
    rec["review"] = {**review, "state": REJECTED, "original": original}
    return rec


def _rejected_configuration(entry: object, message: str) -> object:
    if not isinstance(entry, Mapping) or entry.get("outcome") not in CORRECT_OUTCOMES:
        return entry
    out = {**entry, **{k: None for k in CONFIGURATION_SPEED_KEYS if k in entry}}
    out.update(outcome=REJECTED_OUTCOME.value, error_category=REJECTED_CATEGORY, message=message)
    return out


def accepted_record(record: Mapping[str, Any], review: Mapping[str, Any]) -> dict[str, Any]:
    """The record of an accepted review: unchanged but for the audit under ``review``."""
    return {**record, "review": {**review, "state": ACCEPTED}}
