"""An evaluation row's run log as the public sees it: ``jaxbench.run_log`` over the row's record,
a held row's speed withheld (TRUST.md 6: ``review.public_record``), a reused row's precedent
named, and a row without a record said as its state says it."""

from __future__ import annotations

from typing import Any

from jaxbench.run_log import RunLog, run_log
from jaxbench.verdict import review as review_rules

# the Evaluation fields a run log needs (``.values(*FIELDS)`` or the model's attributes)
FIELDS = ("record", "review", "reused_from_id", "state")

_NO_RUN = {
    "queued": "queued: not run yet",
    "running": "running now: the log is written when the run ends",
    "failed": "no verdict: the harness failed on every attempt (an infrastructure failure, not the candidate's)",
}


def for_row(record: Any, *, review: str = "", reused_from_id: int | None = None, state: str = "") -> RunLog:
    """The run log of one evaluation row from its fields (see :data:`FIELDS`)."""
    shown = review_rules.public_record(record, review or "") if isinstance(record, dict) and record else {}
    log = run_log(shown, reused_from=reused_from_id, speed_withheld=review_rules.is_held(review or ""))
    if log["kind"] == "none" and state in _NO_RUN:
        log["remarks"] = [_NO_RUN[state]]
    return log


def for_evaluation(ev: Any) -> RunLog:
    """The run log of an ``Evaluation``."""
    return for_row(ev.record, review=ev.review, reused_from_id=ev.reused_from_id, state=ev.state)
