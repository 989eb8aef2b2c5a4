"""Speedup intervals on the evaluator's rows: the runner stores them, the migration backfills
rows whose record already holds one, and rows timed before intervals keep NULL (and say so)."""
import importlib

import pytest
from django.apps import apps as django_apps

from evaluator import experts_sweep, pipeline, runner
from evaluator.models import Evaluation, ExpertReference
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    monkeypatch.setattr(pipeline, "enqueue_many", lambda ids, queue: None)


def test_the_runner_stores_the_interval_and_a_reused_row_keeps_it(sent, monkeypatch):
    from evaluator.bench import HARNESS_VERSION
    monkeypatch.setattr(runner, "run_harness", lambda ev: ({
        "outcome": "correct_tie", "speedup": 1.03, "speedup_ci": [0.97, 1.09],
        "harness_version": HARNESS_VERSION, "profile": "small"}, Evaluation.DONE))
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
    monkeypatch.setattr(runner, "run_harness", lambda ev: ({
        "outcome": "incorrect", "speedup": None, "speedup_ci": None, "harness_version": "x",
        "profile": "small"}, Evaluation.DONE))
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


def test_backfill_fills_rows_whose_record_has_an_interval_and_leaves_legacy_rows_null(sent):
    legacy, timed, bad, failed = _rows(sent)
    Evaluation.objects.filter(pk=legacy.pk).update(outcome="correct_faster", speedup=1.3,
                                                   record={"speedup": 1.3})
    Evaluation.objects.filter(pk=timed.pk).update(outcome="correct_tie", speedup=1.02,
                                                  record={"speedup": 1.02, "speedup_ci": [0.95, 1.1]})
    # an interval that does not hold its own point is not trusted
    Evaluation.objects.filter(pk=bad.pk).update(outcome="correct_faster", speedup=1.5,
                                                record={"speedup": 1.5, "speedup_ci": [1.6, 1.7]})
    Evaluation.objects.filter(pk=failed.pk).update(outcome="incorrect", record={"speedup_ci": [0.9, 1.1]})
    hw, wl = factories.hardware(), factories.workload("12p")
    ExpertReference.objects.create(workload=wl, hardware=hw, implementation="x", outcome="correct_faster",
                                   speedup=2.0, record={"speedup_ci": [1.8, 2.2]})
    migration = importlib.import_module("evaluator.migrations.0005_expert_interval_backfill")
    migration.backfill(django_apps, None)

    got = {e.pk: e for e in Evaluation.objects.filter(pk__in=[legacy.pk, timed.pk, bad.pk, failed.pk])}
    assert (got[legacy.pk].outcome, got[legacy.pk].speedup_lo) == ("correct_faster", None)
    assert got[legacy.pk].timed_before_intervals and got[legacy.pk].speedup_text == "1.30x"
    from portal.api.serializers import EvaluationSerializer
    data = {e.pk: EvaluationSerializer(e).data for e in got.values()}
    assert data[legacy.pk]["timed_before_intervals"] is True and data[legacy.pk]["speedup_lo"] is None
    assert data[timed.pk]["timed_before_intervals"] is False and data[timed.pk]["speedup_hi"] == 1.1
    assert (got[timed.pk].speedup_lo, got[timed.pk].speedup_hi) == (0.95, 1.1)
    assert got[bad.pk].speedup_lo is None and got[bad.pk].outcome == "correct_faster"
    assert got[failed.pk].speedup_lo is None
    ref = ExpertReference.objects.get()
    assert (ref.speedup_lo, ref.speedup_hi) == (1.8, 2.2) and ref.speedup_text == "2.00x [1.80, 2.20]"


def test_expert_interval_of_a_record():
    assert experts_sweep.interval_of({"speedup": 1.2, "speedup_ci": [1.1, 1.3]}) == (1.1, 1.3)
    assert experts_sweep.interval_of({"speedup": 1.2}) == (None, None)
    assert experts_sweep.interval_of({"speedup": None, "speedup_ci": None}) == (None, None)
