"""Speedup intervals on the evaluator's rows: the runner stores them, the migration backfills
rows whose record already holds one, and rows timed before intervals keep NULL (and say so)."""

import pytest

from evaluator import experts_sweep, pipeline, reuse, runner
from evaluator.models import Evaluation
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    monkeypatch.setattr(pipeline, "enqueue_many", lambda ids, queue: None)


def test_the_runner_stores_the_interval_and_a_reused_row_keeps_it(sent, monkeypatch):
    from jaxbench import HARNESS_VERSION

    monkeypatch.setattr(
        runner,
        "run_harness",
        lambda ev: (
            {
                "outcome": "correct_tie",
                "speedup": 1.03,
                "speedup_ci": [0.97, 1.09],
                "harness_version": HARNESS_VERSION,
                "jax_version": reuse.jax_version(),
                "profile": "small",
            },
            Evaluation.DONE,
        ),
    )
    sub = factories.submission([("12p", CODE), ("12p", CODE)])
    pipeline.schedule_submission(sub)
    a, b = Evaluation.objects.filter(candidate__submission=sub).order_by("pk")
    assert runner.run_evaluation(a.pk) == Evaluation.DONE
    assert runner.run_evaluation(b.pk) == "reused"
    for ev in (a, b):
        ev.refresh_from_db()
        assert (ev.outcome, ev.speedup, ev.speedup_lo, ev.speedup_hi) == ("correct_tie", 1.03, 0.97, 1.09)
        assert ev.is_correct and not ev.timed_before_intervals
        assert ev.speedup_text == "1.03x [0.97, 1.09]"


def test_a_failed_candidate_has_no_interval(sent, monkeypatch):
    monkeypatch.setattr(
        runner,
        "run_harness",
        lambda ev: (
            {"outcome": "incorrect", "speedup": None, "speedup_ci": None, "harness_version": "x", "profile": "small"},
            Evaluation.DONE,
        ),
    )
    sub = factories.submission([("12p", CODE)])
    pipeline.schedule_submission(sub)
    ev = Evaluation.objects.get(candidate__submission=sub)
    runner.run_evaluation(ev.pk)
    ev.refresh_from_db()
    assert ev.speedup_lo is None and ev.speedup_hi is None and not ev.timed_before_intervals
    assert ev.speedup_text == "-"


def _rows(sent):
    sub = factories.submission([("12p", CODE)] * 4)
    pipeline.schedule_submission(sub)
    return list(Evaluation.objects.filter(candidate__submission=sub).order_by("pk"))


def test_expert_interval_of_a_record():
    assert experts_sweep.interval_of({"speedup": 1.2, "speedup_ci": [1.1, 1.3]}) == (1.1, 1.3)
    assert experts_sweep.interval_of({"speedup": 1.2}) == (None, None)
    assert experts_sweep.interval_of({"speedup": None, "speedup_ci": None}) == (None, None)
