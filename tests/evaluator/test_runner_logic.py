"""Scheduling, claiming, leases and retries, on the database alone (the reconciler: test_reconciler.py)."""

import datetime
import logging

import dramatiq
import pytest
from django.utils import timezone

from evaluator import pipeline, reuse, runner
from evaluator.models import Evaluation
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


def test_schedule_creates_rows_and_enqueues_after_commit(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        sub = factories.submission([("12p", CODE), ("12p", CODE + "#2")])
        ids = pipeline.schedule_submission(sub)
        assert sent == []  # nothing leaves before the commit
    assert sent == [(ids, "eval.cpu")]
    rows = Evaluation.objects.filter(pk__in=ids)
    assert {r.stage for r in rows} == {Evaluation.MAIN} and {r.state for r in rows} == {Evaluation.QUEUED}


def test_accelerator_targets_start_with_the_cpu_precheck(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        sub = factories.submission([("12p", CODE)], hw="tpu-v6e")
        ids = pipeline.schedule_submission(sub)
    assert sent == [(ids, "precheck")]
    assert Evaluation.objects.get(pk=ids[0]).stage == Evaluation.PRECHECK


@pytest.mark.parametrize("hw", ["gpu-h200", "gpu-h100"])
def test_gpu_targets_skip_the_tpu_precheck(sent, hw, django_capture_on_commit_callbacks):
    """The pre-check lowers for TPU and runs TPU interpret mode: nothing a GPU kernel passes."""
    with django_capture_on_commit_callbacks(execute=True):
        sub = factories.submission([("12p", CODE)], hw=hw)
        ids = pipeline.schedule_submission(sub)
    assert sent == [(ids, f"eval.{hw}")]
    assert Evaluation.objects.get(pk=ids[0]).stage == Evaluation.MAIN


def test_only_tpu_targets_are_prechecked():
    from jaxbench import hardware

    assert {t.slug for t in hardware.TARGETS.values() if t.prechecked} == {
        t.slug for t in hardware.TARGETS.values() if t.platform == "tpu"
    }
    assert factories.hardware("tpu-v5e").prechecked and not factories.hardware("gpu-h200").prechecked
    assert not factories.hardware("cpu").prechecked


def _one_row(sent):
    sub = factories.submission([("12p", CODE)])
    pipeline.schedule_submission(sub)
    return Evaluation.objects.get(candidate__submission=sub)


def test_claim_is_exclusive_while_the_lease_lives(sent):
    ev = _one_row(sent)
    first = runner.claim(ev.pk, "w1")
    assert first is not None and first.state == Evaluation.RUNNING and first.attempts == 1
    assert runner.claim(ev.pk, "w2") is None
    # the lease expires (worker died): another worker may take it
    Evaluation.objects.filter(pk=ev.pk).update(lease_expires_at=timezone.now() - datetime.timedelta(seconds=1))
    second = runner.claim(ev.pk, "w2")
    assert second is not None and second.worker == "w2" and second.attempts == 2


def test_final_rows_are_never_claimed_again(sent):
    ev = _one_row(sent)
    claimed = runner.claim(ev.pk, "w1")
    runner.finish(claimed, {"outcome": "incorrect", "message": "off by one"}, Evaluation.DONE)
    assert runner.claim(ev.pk, "w2") is None
    ev.refresh_from_db()
    assert ev.state == Evaluation.DONE and ev.outcome == "incorrect" and ev.lease_expires_at is None


def test_gives_up_after_max_attempts(sent, monkeypatch):
    monkeypatch.setattr(runner, "MAX_ATTEMPTS", 2)
    ev = _one_row(sent)
    Evaluation.objects.filter(pk=ev.pk).update(attempts=2)
    assert runner.claim(ev.pk, "w1") is None
    ev.refresh_from_db()
    assert ev.state == Evaluation.FAILED and "gave up after 2 attempts" in ev.message


def test_infrastructure_failure_releases_the_row_and_raises(sent, monkeypatch):
    ev = _one_row(sent)

    def broken(_ev):
        raise OSError("disk full")

    monkeypatch.setattr(runner, "run_harness", broken)
    with pytest.raises(OSError):
        runner.run_evaluation(ev.pk)
    ev.refresh_from_db()
    assert ev.state == Evaluation.QUEUED and "disk full" in ev.message and ev.attempts == 1


def test_a_candidate_failure_is_an_outcome_not_a_retry(sent, monkeypatch):
    ev = _one_row(sent)
    monkeypatch.setattr(
        runner,
        "run_harness",
        lambda _ev: (
            {"outcome": "compile_error", "message": "bad block", "harness_version": "x", "profile": "small"},
            Evaluation.DONE,
        ),
    )
    assert runner.run_evaluation(ev.pk) == Evaluation.DONE
    ev.refresh_from_db()
    assert ev.outcome == "compile_error" and ev.attempts == 1


def test_identical_code_is_evaluated_once(sent, monkeypatch):
    from jaxbench import HARNESS_VERSION

    calls = []

    def fake(ev):
        calls.append(ev.pk)
        return {
            "outcome": "correct_slower",
            "speedup": 0.9,
            "harness_version": HARNESS_VERSION,
            "jax_version": reuse.jax_version(),
            "profile": "small",
        }, Evaluation.DONE

    monkeypatch.setattr(runner, "run_harness", fake)
    sub = factories.submission([("12p", CODE), ("12p", CODE)])
    pipeline.schedule_submission(sub)
    a, b = Evaluation.objects.filter(candidate__submission=sub).order_by("pk")
    assert runner.run_evaluation(a.pk) == Evaluation.DONE
    assert runner.run_evaluation(b.pk) == "reused"
    b.refresh_from_db()
    assert calls == [a.pk] and b.reused_from_id == a.pk and b.outcome == "correct_slower" and b.speedup == 0.9


def test_precheck_pass_queues_the_accelerator_stage(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        sub = factories.submission([("12p", CODE)], hw="tpu-v6e")
        pipeline.schedule_submission(sub)
    pre = Evaluation.objects.get(candidate__submission=sub)
    claimed = runner.claim(pre.pk, "w1")
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        runner.finish(claimed, {"outcome": "correct_slower", "numerics_prechecked": True}, Evaluation.DONE)
    main = Evaluation.objects.get(candidate__submission=sub, stage=Evaluation.MAIN)
    assert sent == [([main.pk], "eval.tpu-v6e")] and main.state == Evaluation.QUEUED
    pre.refresh_from_db()
    assert pre.outcome == ""  # a passed pre-check is not the candidate's outcome


def test_precheck_failure_stops_the_candidate(sent, django_capture_on_commit_callbacks):
    sub = factories.submission([("12p", CODE)], hw="tpu-v6e")
    pipeline.schedule_submission(sub)
    pre = Evaluation.objects.get(candidate__submission=sub)
    claimed = runner.claim(pre.pk, "w1")
    with django_capture_on_commit_callbacks(execute=True):
        runner.finish(claimed, {"outcome": "incorrect", "message": "max abs err 3.1"}, Evaluation.SKIPPED)
    assert not Evaluation.objects.filter(candidate__submission=sub, stage=Evaluation.MAIN).exists()
    pre.refresh_from_db()
    assert pre.state == Evaluation.SKIPPED and pre.outcome == "incorrect"
    from evaluator.progress import submission_progress

    prog = submission_progress(sub)
    assert prog["finished"] and prog["outcomes"] == {"incorrect": 1} and prog["precheck_saved"]["candidates"] == 1


def test_a_child_killed_from_outside_is_retried_and_only_the_same_death_again_is_the_candidates(
    sent, monkeypatch, caplog
):
    """Killing a child from outside (the host's OOM killer, an operator) is not the candidate's
    doing: the row goes back to the queue with the death noted; the same death on the retry's
    fresh child makes it the candidate's runtime_error with both attempts recorded, and that
    verdict is never reused for identical code."""
    from jaxbench.harness import ChildKilled

    deaths = [ChildKilled("timing", "SIGKILL", "killed"), ChildKilled("timing", "SIGKILL", "killed again")]
    # what the harness recorded of the attempt up to the death (evaluate_case sets it)
    deaths[1].record = {"sandbox": {"clearenv": True}, "seeds": {"check": ["ab" * 8]}, "phase": "timing"}

    def dying(ev):
        raise deaths.pop(0)

    monkeypatch.setattr(runner, "run_harness", dying)
    ev = _one_row(sent)
    with caplog.at_level(logging.WARNING, logger=runner.log.name), pytest.raises(dramatiq.Retry):
        runner.run_evaluation(ev.pk)
    # one line, no traceback: a retry Dramatiq does not log as an unhandled failure
    (line,) = [r for r in caplog.records if r.name == runner.log.name]
    assert "died of SIGKILL during timing" in line.getMessage() and line.exc_info is None
    ev.refresh_from_db()
    assert ev.state == Evaluation.QUEUED and ev.attempts == 1 and len(ev.failures) == 1
    assert ev.failures[0]["death"] == {"phase": "timing", "signal": "SIGKILL"}
    assert runner.run_evaluation(ev.pk) == "died the same way again"
    ev.refresh_from_db()
    assert (ev.state, ev.outcome, ev.record["error_category"]) == (Evaluation.DONE, "runtime_error", "crash")
    assert [a["attempt"] for a in ev.record["infrastructure_attempts"]] == [1, 2]
    # the last attempt's facts stay in the verdict; the worker's own fields are its own
    assert ev.record["sandbox"] == {"clearenv": True} and ev.record["seeds"] == {"check": ["ab" * 8]}
    assert ev.record["workload"] == ev.candidate.workload.wid and "2 fresh children" in ev.record["message"]
    # identical code later is evaluated anew, not handed this verdict
    twin = _one_row(sent)
    assert runner.reusable_record(runner.claim(twin.pk, "w2")) is None


def test_a_different_death_on_the_retry_is_retried_again(sent, monkeypatch):
    from jaxbench.harness import ChildKilled

    deaths = [ChildKilled("compile", "SIGTERM"), ChildKilled("timing", "SIGKILL")]
    monkeypatch.setattr(runner, "run_harness", lambda ev: (_ for _ in ()).throw(deaths.pop(0)))
    ev = _one_row(sent)
    for _ in range(2):
        with pytest.raises(dramatiq.Retry):
            runner.run_evaluation(ev.pk)
    ev.refresh_from_db()
    assert ev.state == Evaluation.QUEUED and len(ev.failures) == 2


def test_a_measurement_the_load_spoiled_is_retried_in_one_line(sent, monkeypatch, caplog):
    """Past the harness's own re-timings, MeasurementUntrusted goes back to the queue as an
    infrastructure retry: one warning line, no traceback, no verdict, the row queued again."""
    from jaxbench.harness import MeasurementUntrusted

    def spoiled(ev):
        raise MeasurementUntrusted("the timing core spent 85% of timing round 1 on other processes")

    monkeypatch.setattr(runner, "run_harness", spoiled)
    ev = _one_row(sent)
    with caplog.at_level(logging.WARNING, logger=runner.log.name), pytest.raises(dramatiq.Retry):
        runner.run_evaluation(ev.pk)
    (line,) = [r for r in caplog.records if r.name == runner.log.name]
    assert "could not be trusted (the timing core spent 85%" in line.getMessage() and line.exc_info is None
    ev.refresh_from_db()
    assert ev.state == Evaluation.QUEUED and ev.outcome in ("", None) and ev.failures == []
