"""A staff member's review of a verdict the harness held (TRUST.md 6, ``jaxbench.verdict.review``).

``accept``: the row counts as its measured verdict. ``reject``: its outcome becomes ``rejected``
(``reward_hack``), the measured verdict kept in the record under ``review.original``. Both are
audited (who, when, note: on the row and in its record) and announce the row as finished again
(``evaluator.signals.evaluation_finished``), so the leaderboard folds it into the aggregates in
the same transaction. Rows that reused this verdict for identical code (``reused_from``) and are
still held (or were stored unheld by an older intake reuse) get the same review: they are the
same measurement. A rejection writes outcome ``rejected`` and error category ``reward_hack`` into
each row's record (``record["error_category"]``, what every page, the API and the CLI read),
its configurations' too (``jaxbench.verdict.review.rejected_record``).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from evaluator.models import Evaluation
from evaluator.signals import evaluation_finished
from jaxbench.verdict import review as review_rules

NOTE_CAP = 4000


class NotHeld(ValueError):
    """The row is not (or no longer) held: someone reviewed it first, or it never was."""


def held_evaluations():
    """Every row waiting for a review, oldest first (the partial index on held rows answers it).
    A test run's held rows wait for their owner to promote it: a private trial is not staff work."""
    return (
        Evaluation.objects.filter(review=Evaluation.HELD)
        .exclude(candidate__submission__test_run=True)
        .select_related("candidate__workload", "candidate__submission__team", "hardware")
        .order_by("id")
    )


def _audit(user, note: str) -> dict:
    return {
        "by": user.get_username() if user is not None else "",
        "at": timezone.now().isoformat(),
        "note": note,
    }


def _apply(ev: Evaluation, decision: str, user, note: str, now) -> None:
    audit = _audit(user, note)
    if decision == Evaluation.ACCEPTED:
        ev.record = review_rules.accepted_record(ev.record, audit)
    else:
        ev.record = review_rules.rejected_record(ev.record, audit)
        ev.outcome = ev.record["outcome"]
        ev.message = ev.record["message"][:4000]
        ev.speedup = ev.speedup_lo = ev.speedup_hi = None  # kept in record["review"]["original"]
    ev.review = decision
    ev.reviewed_by = user
    ev.reviewed_at = now
    ev.review_note = note
    ev.save(
        update_fields=[
            "record",
            "outcome",
            "message",
            "speedup",
            "speedup_lo",
            "speedup_hi",
            "review",
            "reviewed_by",
            "reviewed_at",
            "review_note",
        ]
    )


def decide(evaluation_id: int, decision: str, user, note: str = "") -> Evaluation:
    """Accept or reject a held row (and the held rows that reused its verdict); the leaderboard
    refreshes in the same transaction. Raises ``NotHeld`` if it is not held any more."""
    if decision not in (Evaluation.ACCEPTED, Evaluation.REJECTED):
        raise ValueError(f"not a review decision: {decision!r}")
    note = (note or "").strip()[:NOTE_CAP]
    now = timezone.now()
    with transaction.atomic():
        ev = Evaluation.objects.select_for_update().filter(pk=evaluation_id).first()
        if ev is None or ev.review != Evaluation.HELD:
            raise NotHeld(f"evaluation {evaluation_id} is not held for review")
        # the copies of this verdict: held ones, and ones stored unheld by an intake reuse from
        # before copies kept their precedent's review (evaluator.reuse.reused_fields)
        copies = Evaluation.objects.select_for_update().filter(
            reused_from=ev, review__in=(Evaluation.HELD, Evaluation.REVIEW_NONE)
        )
        rows = [ev, *copies]
        for row in rows:
            _apply(row, decision, user, note, now)
        for row in rows:  # fold into the aggregates (leaderboard.receivers), same transaction
            evaluation_finished.send(sender=Evaluation, evaluation=row)
    return ev
