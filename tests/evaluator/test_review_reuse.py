"""A copy of a held verdict is held, and its precedent's review decides it (issue 31, item 4;
TRUST.md 6): identical code reused at intake (``evaluator.reuse.reuse_at_intake``) keeps the
precedent's review state, and a rejection (``evaluator.review.decide``) writes ``rejected`` /
``reward_hack`` into every copy's stored record, a copy stored unheld before this rule included."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from evaluator import pipeline
from evaluator import review as evaluator_review
from evaluator.models import Evaluation
from leaderboard.models import SubmissionSummary
from leaderboard.views.submission_rows import failed_samples
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


@pytest.fixture
def staff():
    return get_user_model().objects.create_user("staff", password="pw-staff-123", is_staff=True)


def held_precedent():
    first = factories.submission([("12p", CODE)])
    (first_id,) = pipeline.schedule_submission(first)
    notes = ["the upper bound of the speedup's 95% interval is above 10x, ...: held for review"]
    factories.judge(
        first_id, factories.judged_record(outcome="correct_faster", speedup=9.5, held_for_review=True, notes=notes)
    )
    precedent = Evaluation.objects.get(pk=first_id)
    assert precedent.review == Evaluation.HELD
    return first, precedent


def copy_at_intake(first, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        again = factories.submission([("12p", CODE)], team=first.team)
        assert pipeline.schedule_submission(again) == []  # nothing waits: reused at intake
    return again, Evaluation.objects.get(candidate__submission=again)


def test_a_copy_of_a_held_verdict_is_held_and_not_counted(sent, django_capture_on_commit_callbacks):
    first, precedent = held_precedent()
    again, copy = copy_at_intake(first, django_capture_on_commit_callbacks)
    assert copy.reused_from_id == precedent.pk and copy.outcome == "correct_faster"
    assert copy.review == Evaluation.HELD  # held means held: not ranked, not counted as faster
    summary = SubmissionSummary.objects.filter(submission=again, source=SubmissionSummary.EVALUATED).first()
    assert summary is None or summary.counts.get("correct_faster", 0) == 0


def test_rejecting_the_precedent_writes_reward_hack_into_the_copy(sent, staff, django_capture_on_commit_callbacks):
    first, precedent = held_precedent()
    again, copy = copy_at_intake(first, django_capture_on_commit_callbacks)
    evaluator_review.decide(precedent.pk, Evaluation.REJECTED, staff, "forged")
    for row, sub in ((precedent, first), (copy, again)):
        row.refresh_from_db()
        assert (row.review, row.outcome, row.speedup) == (Evaluation.REJECTED, "rejected", None)
        assert row.record["error_category"] == "reward_hack"
        assert row.record["review"]["original"]["outcome"] == "correct_faster"
        failures, _ = failed_samples(sub)
        assert [(f["outcome"], f["category"]) for f in failures] == [("rejected", "reward_hack")]
    summary = SubmissionSummary.objects.get(submission=again, source=SubmissionSummary.EVALUATED)
    assert summary.counts.get("rejected") == 1 and summary.counts.get("correct_faster", 0) == 0


def test_a_copy_stored_unheld_before_the_rule_is_decided_with_its_precedent(
    sent, staff, django_capture_on_commit_callbacks
):
    first, precedent = held_precedent()
    again, copy = copy_at_intake(first, django_capture_on_commit_callbacks)
    Evaluation.objects.filter(pk=copy.pk).update(review=Evaluation.REVIEW_NONE)  # as an older intake stored it
    evaluator_review.decide(precedent.pk, Evaluation.REJECTED, staff)
    copy.refresh_from_db()
    assert (copy.review, copy.outcome) == (Evaluation.REJECTED, "rejected")
    assert copy.record["error_category"] == "reward_hack"


def test_an_accepted_precedent_accepts_its_copy(sent, staff, django_capture_on_commit_callbacks):
    first, precedent = held_precedent()
    again, copy = copy_at_intake(first, django_capture_on_commit_callbacks)
    evaluator_review.decide(precedent.pk, Evaluation.ACCEPTED, staff)
    copy.refresh_from_db()
    assert (copy.review, copy.outcome, copy.speedup) == (Evaluation.ACCEPTED, "correct_faster", 9.5)
    summary = SubmissionSummary.objects.get(submission=again, source=SubmissionSummary.EVALUATED)
    assert summary.counts.get("correct_faster") == 1
