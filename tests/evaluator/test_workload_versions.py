"""Evaluation rows are keyed by the workload version: set at creation, checked at claim,
stamped into the record, matched by reuse, and folded into the aggregates only when current."""

import importlib

import pytest
from django.apps import apps as django_apps

from catalog.models import Workload
from evaluator import pipeline, runner
from evaluator.models import Evaluation
from jaxbench import workloads as registry
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import WorkloadResult
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


def _scheduled(code=CODE):
    sub = factories.submission([("12p", code)])
    pipeline.schedule_submission(sub)
    return sub, Evaluation.objects.get(candidate__submission=sub)


def test_rows_take_the_catalogue_version_and_the_record_is_stamped(sent):
    sub, ev = _scheduled()
    assert (ev.workload_version, ev.workload_version_assumed) == (1, False)
    claimed = runner.claim(ev.pk, "w1")
    runner.finish(claimed, {"outcome": "incorrect", "message": "off"}, Evaluation.DONE)
    ev.refresh_from_db()
    assert ev.record["workload_version"] == 1
    assert ev.record["workload_content_hash"] == registry.get("12p").content_hash
    # a bump synced to the catalogue: the next upload's rows ask for version 2
    Workload.objects.filter(wid="12p").update(version=2)
    _, ev2 = _scheduled(CODE + "#2")
    assert ev2.workload_version == 2


def test_a_worker_with_another_version_does_not_measure_the_row(sent, monkeypatch):
    factories.workload("12p")
    Workload.objects.filter(wid="12p").update(version=2)
    _, ev = _scheduled()
    assert ev.workload_version == 2
    assert runner.claim(ev.pk, "old-worker") is None  # its registry still says 1
    ev.refresh_from_db()
    assert ev.state == Evaluation.FAILED and "asks for workload 12p version 2" in ev.message
    assert "defines version 1" in ev.message
    # a worker that has the bump measures it
    _, ev2 = _scheduled(CODE + "#new")
    factories.bump_registry(monkeypatch, "12p", 2)
    assert runner.claim(ev2.pk, "new-worker").state == Evaluation.RUNNING


def test_reuse_needs_the_same_workload_version(sent):
    _, first = _scheduled()
    runner.finish(runner.claim(first.pk, "w"), {"outcome": "incorrect", "message": "x"}, Evaluation.DONE)
    first.refresh_from_db()
    first.record.update({"harness_version": runner.HARNESS_VERSION, "profile": "small"})
    from evaluator import reuse

    first.record["jax_version"] = reuse.jax_version()
    Evaluation.objects.filter(pk=first.pk).update(record=first.record)
    _, same = _scheduled()  # identical code, same version: reused at intake
    assert same.reused_from_id == first.pk
    Workload.objects.filter(wid="12p").update(version=2)
    _, later = _scheduled()  # identical code, later version: measured again
    assert later.reused_from_id is None and later.state == Evaluation.QUEUED and later.workload_version == 2
    assert reuse.reusable_record(later) is None


def test_only_the_current_version_is_folded(sent, monkeypatch):
    sub, ev = _scheduled()
    rec = {"outcome": "correct_faster", "speedup": 2.0, "speedup_ci": [1.8, 2.2], "message": ""}
    runner.finish(runner.claim(ev.pk, "w"), rec, Evaluation.DONE)
    row = WorkloadResult.objects.get(submission=sub)
    assert row.workload_version == 1 and row.best_speedup == pytest.approx(2.0)
    # the workload is bumped: the version-1 result is kept but no longer counts
    Workload.objects.filter(wid="12p").update(version=2)
    rebuild_submission(sub)
    assert not WorkloadResult.objects.filter(submission=sub).exists()
    assert Evaluation.objects.get(pk=ev.pk).speedup == 2.0
    # a version-2 row of the same candidate folds, keyed by its version
    v2 = Evaluation.objects.create(
        candidate=ev.candidate,
        hardware=ev.hardware,
        stage=ev.stage,
        code_sha256=ev.code_sha256,
        workload_version=2,
    )
    factories.bump_registry(monkeypatch, "12p", 2)
    runner.finish(
        runner.claim(v2.pk, "w"),
        {"outcome": "correct_faster", "speedup": 3.0, "speedup_ci": [2.8, 3.2], "message": ""},
        Evaluation.DONE,
    )
    assert Evaluation.objects.get(pk=v2.pk).record["workload_version"] == 2
    row = WorkloadResult.objects.get(submission=sub)
    assert row.workload_version == 2 and row.best_speedup == pytest.approx(3.0)
    rebuild_submission(sub)
    row = WorkloadResult.objects.get(submission=sub)
    assert row.workload_version == 2 and row.best_speedup == pytest.approx(3.0)


def test_the_migration_backfills_the_current_version_as_assumed(sent, monkeypatch):
    _, ev = _scheduled()
    migration = importlib.import_module("evaluator.migrations.0006_evaluation_workload_version")
    from jaxbench.workloads import versions

    monkeypatch.setitem(versions.RECORDED, "12p", (4, "feedfacefeedface"))
    migration.backfill(django_apps, None)
    ev.refresh_from_db()
    assert (ev.workload_version, ev.workload_version_assumed) == (4, True)


def test_rebuild_aggregates_folds_the_current_version_and_says_what_it_left(sent):
    from io import StringIO

    from django.core.management import call_command

    sub, ev = _scheduled()
    runner.finish(runner.claim(ev.pk, "w"), {"outcome": "incorrect", "message": "x"}, Evaluation.DONE)
    out = StringIO()
    call_command("rebuild_aggregates", stdout=out)
    assert "earlier workload version" not in out.getvalue()
    assert WorkloadResult.objects.filter(submission=sub).exists()
    Workload.objects.filter(wid="12p").update(version=2)
    call_command("rebuild_aggregates", stdout=out)
    assert "1 evaluations of an earlier workload version kept, not folded" in out.getvalue()
    assert not WorkloadResult.objects.filter(submission=sub).exists()


def test_a_row_of_an_earlier_version_finishing_late_is_noted_not_folded(sent):
    from leaderboard.models import SubmissionSummary

    sub, ev = _scheduled()
    claimed = runner.claim(ev.pk, "w")  # measured under version 1 ...
    rebuild_submission(sub)
    Workload.objects.filter(wid="12p").update(version=2)  # ... while version 2 is synced
    runner.finish(claimed, {"outcome": "correct_faster", "speedup": 2.0, "message": ""}, Evaluation.DONE)
    assert not WorkloadResult.objects.filter(submission=sub).exists()
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.earlier_versions == 1 and summary.n_samples == 0
    rebuild_submission(sub)
    assert SubmissionSummary.objects.get(pk=summary.pk).earlier_versions == 1
