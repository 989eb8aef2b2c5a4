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


class _Time:
    """dramatiq.worker's clock without its waits (consumer restarts, ack retries)."""

    def __getattr__(self, name):
        return getattr(time, name)

    def sleep(self, seconds):
        pass


@pytest.fixture
def calm_stub_broker(monkeypatch, waits):
    """A stub broker booted through CalmConsumers for the queue eval.cpu (its log filters on
    Dramatiq's loggers removed afterwards)."""
    import types

    import dramatiq.worker
    from dramatiq.brokers.stub import StubBroker
    from dramatiq.middleware import Retries

    from evaluator import worker_middleware

    monkeypatch.setattr(dramatiq.worker, "time", _Time())
    broker = StubBroker(middleware=[Retries(min_backoff=1)])
    broker.declare_queue("eval.cpu")
    worker = types.SimpleNamespace(consumer_whitelist={"eval.cpu"})
    yield broker, lambda: worker_middleware.CalmConsumers().before_worker_boot(broker, worker)
    for name in worker_middleware.dramatiq_loggers(broker, {"eval.cpu"}):
        logging.getLogger(name).removeFilter(worker_middleware.calm_log)
    outage.BROKER.note_up()


def test_a_broker_outage_is_one_line_when_it_starts_and_one_when_it_ends(calm_stub_broker, caplog):
    """What Dramatiq itself logs while the broker is away (its consumer restarting, an in-flight
    message's ack retried every 5 s, Retries failing to send a retry) goes to outage.BROKER."""
    import queue

    import redis
    from dramatiq.broker import MessageProxy
    from dramatiq.errors import ConnectionClosed
    from dramatiq.message import Message
    from dramatiq.worker import ConsumerThread

    broker, boot = calm_stub_broker
    refused = ConnectionClosed(redis.exceptions.ConnectionError("Error 111 connecting. Connection refused."))
    thread = ConsumerThread(
        broker=broker, queue_name="eval.cpu", prefetch=2, work_queue=queue.PriorityQueue(), worker_timeout=1000
    )
    fetches = []

    def consume(queue_name, prefetch=1, timeout=5000):
        fetches.append(queue_name)
        if len(fetches) >= 4:
            thread.running = False  # the worker stops after four restarts
        raise refused

    broker.consume = consume
    boot()

    class Consumer:
        acks = []

        def ack(self, message):
            self.acks.append(message.message_id)
            if len(self.acks) <= 6:  # 30 s of retries every 5 s
                raise refused

    job = dramatiq.actor(lambda: None, broker=broker, actor_name="job", queue_name="eval.cpu")
    message = MessageProxy(Message(queue_name="eval.cpu", actor_name=job.actor_name, args=(), kwargs={}, options={}))

    def enqueue(message, *, delay=None):
        raise redis.exceptions.ConnectionError("Error 111 connecting. Connection refused.")

    broker.enqueue = enqueue
    with caplog.at_level(logging.INFO):
        thread.run()  # four restarts, each a connection error
        broker.emit_after("process_message", message, exception=ValueError("the actor failed"))  # Retries
        thread.consumer = Consumer()
        thread.post_process_message(message)  # six failed acks, then the broker is back
        outage.BROKER.note_up()  # the consumer's reconnection
        logging.getLogger("dramatiq.worker.WorkerThread").error(
            "Failed to process message %s with unhandled exception.",
            message,
            exc_info=(ValueError, ValueError("x"), None),
        )
    assert len(fetches) == 4 and len(Consumer.acks) == 7
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 3, lines
    assert lines[0].startswith("broker unreachable (ConnectionClosed: Error 111")
    # held back: 4 connection errors and 3 restarts of the consumer, Retries' failure, 6 ack retries
    assert lines[1].startswith("broker back after") and lines[1].endswith("(14 repeated log records held back)")
    assert lines[2].startswith("Failed to process message")  # an actor's own failure still speaks
