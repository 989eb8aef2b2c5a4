"""One pending wake-up per queued row: the reconciler re-sends only messages that are gone.

The broker is modelled by what it holds per queue (each message a row id); a message stays there
until a worker takes it. Time is simulated: the reconciler runs every 30 s for an hour."""

import collections
import datetime

import pytest
from django.utils import timezone

from evaluator import broker as broker_state
from evaluator import pipeline, reconciler, runner
from evaluator.models import Evaluation, WorkerHeartbeat
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


class FakeBroker:
    def __init__(self):
        self.queues = collections.defaultdict(list)  # queue -> row ids of the messages it holds
        self.sent = collections.Counter()  # row id -> messages ever sent for it

    def enqueue_many(self, ids, queue):
        for i in ids:
            self.queues[queue].append(i)
            self.sent[i] += 1

    def pending(self, queues):
        return {q: len(self.queues[q]) for q in queues}

    def flush(self):
        self.queues.clear()


@pytest.fixture
def broker(monkeypatch):
    fake = FakeBroker()
    monkeypatch.setattr(pipeline, "enqueue_many", fake.enqueue_many)
    monkeypatch.setattr(reconciler, "enqueue_many", fake.enqueue_many)
    monkeypatch.setattr(broker_state, "pending_messages", fake.pending)
    return fake


@pytest.fixture
def rows(django_capture_on_commit_callbacks):
    """Stored submissions of ``n`` candidates, their wake-ups sent after commit as the intake does."""

    def make(n, hw="cpu"):
        with django_capture_on_commit_callbacks(execute=True):
            sub = factories.submission([("12p", CODE + f"# {i}\n") for i in range(n)], hw=hw)
            pipeline.schedule_submission(sub)
        return _ids(sub)

    return make


def _ids(sub):
    return list(Evaluation.objects.filter(candidate__submission=sub).order_by("pk").values_list("pk", flat=True))


def live_worker(queues, when, name="w:1"):
    WorkerHeartbeat.objects.update_or_create(
        name=name,
        defaults=dict(
            hostname="w",
            pid=1,
            hardware="cpu",
            queues=list(queues),
            started_at=when,
            last_seen_at=when,
        ),
    )


def run_for(seconds, start, every=30, queues=("eval.cpu",)):
    """The reconciler every ``every`` s of simulated time, a live worker (busy: it takes nothing)."""
    out = []
    for k in range(1, seconds // every + 1):
        now = start + datetime.timedelta(seconds=k * every)
        live_worker(queues, now)
        out += reconciler.reconcile(stale_seconds=120, now=now)
    return out


def test_an_hour_of_backlog_gets_exactly_one_message_per_row(broker, rows):
    ids = rows(40)
    assert all(broker.sent[i] == 1 for i in ids)  # the intake's own wake-ups
    assert run_for(3600, timezone.now()) == []
    assert max(broker.sent.values()) == 1 and len(broker.queues["eval.cpu"]) == 40


def test_lost_messages_are_sent_again_once(broker, rows):
    ids = rows(30)
    start = timezone.now()
    broker.flush()  # a broker restarted without persistence
    resent = run_for(3600, start)
    assert sorted(resent) == ids
    assert all(broker.sent[i] == 2 for i in ids) and len(broker.queues["eval.cpu"]) == 30
    # some lost, some not: only as many as are missing, the longest-waiting first
    broker.queues["eval.cpu"] = broker.queues["eval.cpu"][:20]
    later = start + datetime.timedelta(hours=2)
    assert len(run_for(600, later)) == 10 and len(broker.queues["eval.cpu"]) == 30


def test_rows_of_a_hardware_without_a_worker_wait_without_new_messages(broker, rows):
    tpu = rows(5, hw="tpu-v6e")  # first stage: the CPU pre-check
    Evaluation.objects.filter(pk__in=tpu).update(stage=Evaluation.MAIN)
    broker.flush()
    start = timezone.now()
    assert run_for(3600, start, queues=("eval.cpu", "precheck")) == []
    assert all(broker.sent[i] == 1 for i in tpu)
    # a tpu-v6e worker comes: its first reconcile sends what is missing, once
    later = start + datetime.timedelta(hours=1, seconds=30)
    live_worker(["eval.tpu-v6e"], later, name="tpu:1")
    assert sorted(reconciler.reconcile(stale_seconds=120, now=later)) == tpu
    assert run_for(600, later, queues=("eval.tpu-v6e",)) == []
    assert all(broker.sent[i] == 2 for i in tpu)


def test_an_expired_lease_sends_one_new_message(broker, rows):
    (ev,) = rows(1)
    broker.queues["eval.cpu"].remove(ev)  # the dead worker had taken it
    runner.claim(ev, "dead-worker")
    Evaluation.objects.filter(pk=ev).update(lease_expires_at=timezone.now() - datetime.timedelta(seconds=5))
    assert run_for(600, timezone.now()) == [ev]
    assert Evaluation.objects.get(pk=ev).state == Evaluation.QUEUED and broker.sent[ev] == 2


def test_a_message_consumed_early_by_a_redelivery_is_sent_again(broker, rows):
    """RabbitMQ hands a killed worker's unacked message to the next worker at once; if that one
    takes it while the dead worker's lease still runs, it finds nothing to do and the message is
    gone. When the lease expires the row is queued with no message anywhere: it is sent again."""
    (ev,) = rows(1)
    runner.claim(ev, "dead-worker")
    broker.queues["eval.cpu"].remove(ev)  # redelivered, taken, 'nothing to do', acked
    Evaluation.objects.filter(pk=ev).update(lease_expires_at=timezone.now() - datetime.timedelta(seconds=1))
    assert run_for(60, timezone.now()) == [ev] and broker.sent[ev] == 2


def test_a_killed_workers_heartbeat_ages_out(broker):
    from evaluator import health

    start = timezone.now()
    live_worker(["eval.cpu"], start, name="killed:1")
    live_worker(["eval.cpu"], start, name="alive:2")
    assert {w["name"] for w in health.status()["workers"]} == {"killed:1", "alive:2"}
    WorkerHeartbeat.objects.filter(name="killed:1").update(last_seen_at=start - datetime.timedelta(minutes=1))
    assert {w["name"] for w in health.status()["workers"]} == {"alive:2"}  # off the page after 3 beats
    later = start + datetime.timedelta(hours=1, minutes=2)
    live_worker(["eval.cpu"], later, name="alive:2")  # still beating
    reconciler.reconcile(now=later)
    assert list(WorkerHeartbeat.objects.values_list("name", flat=True)) == ["alive:2"]
