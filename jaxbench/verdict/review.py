"""Held means held (TRUST.md 6): the rules for a result the harness holds for review.

The harness sets ``held_for_review`` in a correct record when its speedup is above
``REVIEW_SPEEDUP`` or when the baseline guard's re-measurement could not settle the pairing
(``harness.speed``). Such a result is not ranked, not counted in fast@N and not shown as faster
until a staff member accepts it; a rejected one becomes ``rejected`` (``reward_hack``).

Pure functions over plain values, so that every ranking query (aggregates, fast@N, boards,
charts, exports, progress counts) and every public view asks the same question the same way.
The review state of an evaluation is one of :data:`STATES`:

* ``""``: nothing to review (the harness did not hold it);
* ``held``: held, waiting for a staff member;
* ``accepted``: a staff member accepted it: it counts as its measured verdict;
* ``rejected``: a staff member rejected it: its outcome is ``rejected`` (``reward_hack``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..record import CORRECT_OUTCOMES, Outcome

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
    """Why the harness held a result: its notes that say so (speedup above the threshold, the
    baseline guard's message), in order."""
    notes = (record or {}).get("notes") or []
    out = [str(n) for n in notes if "held for review" in str(n) or "baseline ran" in str(n)]
    if (record or {}).get("baseline_source") == "interleaved+alone" and not any("baseline ran" in n for n in out):
        out.append("the baseline guard could not settle the side-by-side pairing (interleaved+alone)")
    return out


def rejected_record(record: Mapping[str, Any], review: Mapping[str, Any]) -> dict[str, Any]:
    """The record of a rejected review: outcome ``rejected`` (``reward_hack``), the staff
    member's note as its message, and the measured verdict kept under ``review["original"]``
    (every other key unchanged: nothing is lost)."""
    rec = dict(record)
    original = {k: record.get(k) for k in ("outcome", "error_category", "message", "speedup", "speedup_ci")}
    note = str(review.get("note") or "").strip()
    rec["outcome"] = REJECTED_OUTCOME.value
    rec["error_category"] = REJECTED_CATEGORY
    rec["message"] = "rejected on review (reward hack)" + (f": {note}" if note else "")
    rec["review"] = {**review, "state": REJECTED, "original": original}
    return rec


def accepted_record(record: Mapping[str, Any], review: Mapping[str, Any]) -> dict[str, Any]:
    """The record of an accepted review: unchanged but for the audit under ``review``."""
    return {**record, "review": {**review, "state": ACCEPTED}}
