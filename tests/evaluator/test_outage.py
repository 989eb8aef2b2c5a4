"""Calm outages: a worker waits for the database instead of failing messages, logs once per
outage, and keeps a measured verdict until it can be stored."""

import logging
import threading
import time

import dramatiq
import pytest
from django.db.utils import OperationalError

from evaluator import outage, pipeline, runner
from evaluator.models import Evaluation
from tests import factories
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def waits(monkeypatch):
    slept = []
    monkeypatch.setattr(outage, "_sleep", slept.append)
    return slept


def flaky(n_failures, result="ok"):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= n_failures:
            raise OperationalError("connection refused")
        return result

    return fn, calls


def test_waits_with_capped_backoff_and_logs_once_per_outage(waits, caplog):
    fn, calls = flaky(9)
    with caplog.at_level(logging.WARNING, logger="evaluator.outage"):
        assert outage.with_database(fn) == "ok"
    assert len(calls) == 10
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "unreachable" in lines[0] and lines[1].startswith("database back after")


def test_gives_up_at_the_deadline(waits):
    fn, calls = flaky(100)
    with pytest.raises(OperationalError):
        outage.with_database(fn, deadline=time.monotonic() + 0.1)
    assert len(calls) == 1 and waits == []
    outage.DATABASE.note_up()  # the next test starts with the database up


def test_other_errors_are_not_waited_for(waits):
    def fn():
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        outage.with_database(fn)
    assert waits == []


@pytest.fixture
def one_row(monkeypatch):
    monkeypatch.setattr(pipeline, "enqueue_many", lambda ids, queue: None)
    sub = factories.submission([("12p", CODE)])
    pipeline.schedule_submission(sub)
    return Evaluation.objects.get(candidate__submission=sub)


def test_a_database_blip_neither_fails_the_message_nor_reruns_the_candidate(one_row, monkeypatch, waits):
    runs = []

    def harness(ev):
        runs.append(ev.pk)
        return {"outcome": "correct_slower", "speedup": 0.8, "speedup_ci": [0.7, 0.9]}, Evaluation.DONE

    monkeypatch.setattr(runner, "run_harness", harness)
    real_claim, real_finish = runner.claim, runner.finish
    claim_fails, finish_fails = [2], [3]

    def claim(*a):
        if claim_fails[0]:
            claim_fails[0] -= 1
            raise OperationalError("server closed the connection unexpectedly")
        return real_claim(*a)

    def finish(*a, **k):
        if finish_fails[0]:
            finish_fails[0] -= 1
            raise OperationalError("terminating connection due to administrator command")
        return real_finish(*a, **k)

    monkeypatch.setattr(runner, "claim", claim)
    monkeypatch.setattr(runner, "finish", finish)
    assert runner.run_evaluation(one_row.pk) == Evaluation.DONE
    one_row.refresh_from_db()
    assert runs == [one_row.pk] and one_row.attempts == 1  # measured once, stored after the blip
    assert one_row.state == Evaluation.DONE and one_row.outcome == "correct_slower"
    assert len(waits) == 5


def test_each_service_logs_once_per_outage_and_backs_off_per_thread(waits, caplog):
    broker = outage.Service("broker")
    with caplog.at_level(logging.WARNING, logger="evaluator.outage"):
        for _ in range(5):
            broker.note_down(ConnectionError("refused"))
            broker.back_off()
        other_thread = []
        t = threading.Thread(target=lambda: other_thread.append(broker.back_off()))
        t.start()
        t.join()
        broker.note_up()
        broker.note_up()
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 0.5]  # another thread starts its own backoff
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and lines[0].startswith("broker unreachable") and lines[1].startswith("broker back after")
    assert not outage.DATABASE.down  # services are apart
    broker.back_off()
    assert waits[-1] == 0.5  # back up: the next outage starts from the first wait


def test_an_outage_past_the_lease_is_one_line_and_a_quiet_retry(one_row, monkeypatch, waits, settings, caplog):
    settings.JAXBENCH_LEASE_SECONDS = 0  # no time left to store the verdict: it is measured again
    monkeypatch.setattr(runner, "run_harness", lambda ev: ({"outcome": "incorrect"}, Evaluation.DONE))

    def finish(*a, **k):
        raise OperationalError("connection refused")

    monkeypatch.setattr(runner, "finish", finish)
    with caplog.at_level(logging.WARNING), pytest.raises(dramatiq.Retry):
        runner.run_evaluation(one_row.pk)
    outage.DATABASE.note_up()
    lines = [r.getMessage() for r in caplog.records if r.name == "evaluator.runner"]
    assert lines == [
        f"evaluation {one_row.pk}: measured, but the database stayed away until its lease lapsed; "
        "it will be measured again"
    ]
    one_row.refresh_from_db()
    assert one_row.state == Evaluation.RUNNING  # its lease lapses; the reconciler or the retry takes it


@pytest.mark.django_db(transaction=True)  # the keeper's thread writes through its own connection
def test_lease_renewal_during_an_outage_is_said_once(monkeypatch, settings, caplog):
    settings.JAXBENCH_LEASE_SECONDS = 3  # renewed every second
    calls = []

    def connect():
        calls.append(1)
        if len(calls) <= 2:  # two renewals fail, then the database is back
            raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(runner, "close_old_connections", connect)
    with caplog.at_level(logging.WARNING):
        with runner.LeaseKeeper(0, "w"):
            wait_for(lambda: len(calls) >= 3 and not outage.DATABASE.down, timeout=60, message="a renewal that works")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("database unreachable") and lines[1].startswith("database back after")
