"""Evaluation rows are keyed by the harness version too (jaxbench.HARNESS_VERSION, the exact
string): set when a row is created, checked when a worker claims it, matched by reuse, and a
later harness's row of the same candidate stands beside the earlier one."""

import importlib

import pytest
from django.apps import apps as django_apps

from evaluator import pipeline, reuse, runner
from evaluator.models import Evaluation, current_harness_version
from jaxbench import HARNESS_VERSION
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


def _scheduled(code=CODE, hw="cpu"):
    sub = factories.submission([("12p", code)], hw=hw)
    pipeline.schedule_submission(sub)
    return sub, Evaluation.objects.get(candidate__submission=sub)


def test_rows_take_the_current_harness_and_a_passed_precheck_passes_it_on(sent):
    _, ev = _scheduled()
    assert (ev.harness_version, ev.harness_version_assumed) == (current_harness_version(), False)
    sub, pre = _scheduled(hw="tpu-v6e")
    assert pre.stage == Evaluation.PRECHECK
    factories.judge(pre.pk, factories.judged_record(numerics_prechecked=True))
    main = Evaluation.objects.get(candidate__submission=sub, stage=Evaluation.MAIN)
    assert main.harness_version == current_harness_version()


def test_a_worker_of_another_harness_does_not_measure_the_row(sent, monkeypatch):
    _, ev = _scheduled()
    factories.bump_harness(monkeypatch, "9.0.0")  # the workers run a newer harness than the row's
    assert runner.claim(ev.pk, "new-worker") is None
    ev.refresh_from_db()
    assert ev.state == Evaluation.FAILED
    assert f"asks for harness {HARNESS_VERSION}, the worker runs harness 9.0.0" in ev.message
    # a row scheduled now is the new harness's, and measured
    _, ev2 = _scheduled(CODE + "#2")
    assert ev2.harness_version == "9.0.0" and runner.claim(ev2.pk, "new-worker").state == Evaluation.RUNNING


def test_reuse_needs_the_same_harness_version(sent, monkeypatch):
    _, first = _scheduled()
    factories.judge(first.pk, factories.judged_record("correct_faster", 2.0))
    _, same = _scheduled()  # identical code, same harness: reused at intake
    assert same.reused_from_id == first.pk
    factories.bump_harness(monkeypatch, "9.0.0")
    _, later = _scheduled()  # identical code, a later harness: measured again
    assert later.reused_from_id is None and later.state == Evaluation.QUEUED
    assert later.harness_version == "9.0.0" and reuse.reusable_record(later) is None


def test_a_later_harness_row_of_the_same_candidate_stands_beside_the_earlier_one(sent, monkeypatch):
    sub, first = _scheduled()
    factories.judge(first.pk, factories.judged_record("correct_faster", 2.0))
    factories.bump_harness(monkeypatch, "9.0.0")
    waiting = pipeline.schedule_candidates(sub, sub.candidates.all())
    rows = Evaluation.objects.filter(candidate__submission=sub).order_by("pk")
    assert [(e.harness_version, e.state) for e in rows] == [
        (HARNESS_VERSION, Evaluation.DONE),
        ("9.0.0", Evaluation.QUEUED),
    ]
    assert waiting == [rows[1].pk]  # only the new row is sent, never the earlier one again


def test_the_migration_takes_each_rows_recorded_harness(sent):
    _, named = _scheduled()
    _, older = _scheduled(CODE + "#older")
    _, unnamed = _scheduled(CODE + "#unnamed")
    _, queued = _scheduled(CODE + "#queued")
    Evaluation.objects.filter(pk=named.pk).update(state=Evaluation.DONE, record={"harness_version": "1.0.0"})
    Evaluation.objects.filter(pk=older.pk).update(state=Evaluation.DONE, record={"versions": {"harness": "0.9"}})
    Evaluation.objects.filter(pk=unnamed.pk).update(state=Evaluation.FAILED, record={})
    migration = importlib.import_module("evaluator.migrations.0007_evaluation_harness_version")
    migration.backfill(django_apps, None)
    got = {e.pk: (e.harness_version, e.harness_version_assumed) for e in Evaluation.objects.all()}
    assert got[named.pk] == ("1.0.0", False) and got[older.pk] == ("0.9", False)
    assert got[unnamed.pk] == (current_harness_version(), True)
    assert got[queued.pk] == (current_harness_version(), False)  # a worker of the current harness measures it
