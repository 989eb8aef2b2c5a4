"""A compile overrun is the candidate's verdict (issue 31, item 5): the worker stores it and never
retries it, at the main stage and at the pre-check alike."""

import pytest

from evaluator import pipeline, runner
from evaluator.models import Evaluation
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"
RECORD = {
    "outcome": "compile_error",
    "error_category": "compile_timeout",
    "message": "compile (import, trace, lower, compile) exceeded 15 s",
    "harness_version": "x",
    "profile": "small",
}


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


def test_a_compile_timeout_is_stored_once_not_retried(sent, monkeypatch):
    sub = factories.submission([("12p", CODE)])
    pipeline.schedule_submission(sub)
    ev = Evaluation.objects.get(candidate__submission=sub)
    monkeypatch.setattr(runner, "run_harness", lambda _ev: (dict(RECORD), Evaluation.DONE))
    assert runner.run_evaluation(ev.pk) == Evaluation.DONE
    ev.refresh_from_db()
    assert ev.state == Evaluation.DONE and ev.outcome == "compile_error" and ev.attempts == 1
    assert ev.record["error_category"] == "compile_timeout" and not ev.failures
    assert runner.run_evaluation(ev.pk) == "nothing to do"  # a redelivered message does not run it again


def test_a_compile_timeout_at_the_precheck_stops_the_candidate(monkeypatch):
    from jaxbench import harness

    monkeypatch.setattr(harness, "lower_for_platform", lambda *a, **k: {"outcome": None, "ok": True})
    monkeypatch.setattr(harness, "evaluate", lambda *a, **k: dict(RECORD))
    record, state = runner.precheck(factories.workload("12p"), CODE, factories.hardware("tpu-v6e"), True)
    assert state == Evaluation.SKIPPED and record["error_category"] == "compile_timeout"
