"""The reconciler: one pending wake-up per queued row, never a second while the first waits.

The database is the truth: a queued row is work to do, its message only wakes a worker. A message
can be lost (a broker flushed or restarted without persistence, a crash between commit and send,
a worker killed holding it): then the row waits forever unless someone sends it again. Sending
again every row that merely waits its turn floods the broker instead (a 7,200-sample trace queued
for hours, re-sent every 30 s, or a queue with no worker growing without bound).

So, per queue: rows waiting = queued rows of that queue; messages alive = what the broker holds
for it (``evaluator.broker``). Only when rows outnumber messages are messages gone, and only that many rows are re-sent: those sent longest ago
(the likeliest to have lost theirs), and only if they were last sent more than the stale age ago.
A queue with no live worker gets nothing: its rows wait ("waiting for a <hardware> worker") and
the first reconcile of the worker that comes (at its boot) sends what is missing. Running rows
whose lease expired go back to queued first (their worker died). Test runs whose time is up are
deleted before anything is counted (submissions.intake.test_runs).
"""

from __future__ import annotations

import datetime
import logging
from collections import defaultdict

from django.conf import settings
from django.db.models import Count, F, Q
from django.utils import timezone

from evaluator import broker as broker_state
from evaluator import outage
from evaluator.health import live_heartbeats
from evaluator.models import Evaluation, WorkerHeartbeat
from evaluator.pipeline import enqueue_many
from evaluator.queues import PRECHECK_QUEUE, hardware_of_queue, lane_of_queue, stage_queue
from submissions.intake import expire_test_runs

log = logging.getLogger(__name__)


def live_queues(now) -> set[str]:
    """The queues some live worker consumes, from the heartbeats."""
    return {q for qs in live_heartbeats(now).values_list("queues", flat=True) for q in qs}


# a worker killed without its shutdown hook leaves its heartbeat row; /health/ stops listing it
# after three missed beats, and the row itself goes after this long (kept a while for diagnosis)
FORGET_DEAD_WORKERS_AFTER = datetime.timedelta(hours=1)


def forget_dead_workers(now) -> int:
    return WorkerHeartbeat.objects.filter(last_seen_at__lt=now - FORGET_DEAD_WORKERS_AFTER).delete()[0]


def requeue_expired_leases(now) -> int:
    """Running rows whose worker stopped renewing the lease go back to queued (message gone)."""
    return Evaluation.objects.filter(state=Evaluation.RUNNING, lease_expires_at__lt=now).update(
        state=Evaluation.QUEUED,
        lease_expires_at=None,
        enqueued_at=None,  # its message was consumed: the row needs a new one
        message="re-queued: the worker's lease expired",
    )


def _of_queue(queue: str) -> Q:
    """The rows whose messages go to ``queue`` (the inverse of queues.stage_queue)."""
    lane, base = lane_of_queue(queue)
    if base == PRECHECK_QUEUE:
        return Q(stage=Evaluation.PRECHECK, lane=lane)
    return Q(stage=Evaluation.MAIN, hardware__slug=hardware_of_queue(queue), lane=lane)


def missing_messages(rows_waiting: int, messages: int) -> int:
    """How many of a queue's waiting rows have no message left (pure: the whole rule)."""
    return max(0, rows_waiting - messages)


def reconcile(stale_seconds: float | None = None, now=None) -> list[int]:
    """Re-send the rows whose message is gone; returns their ids. Safe anywhere, any number of
    times: a conditional UPDATE makes one caller win each row, and claim() ignores duplicates."""
    now = now or timezone.now()
    stale = float(stale_seconds if stale_seconds is not None else settings.JAXBENCH_RECONCILE_STALE_SECONDS)
    cutoff = now - datetime.timedelta(seconds=stale)
    forget_dead_workers(now)
    gone = expire_test_runs(now)  # their rows must not be re-sent
    if gone:
        log.info("reconciler: %d expired test run(s) deleted", gone)
    expired = requeue_expired_leases(now)
    waiting: dict[str, int] = defaultdict(int)
    for row in (
        Evaluation.objects.filter(state=Evaluation.QUEUED)
        .values("stage", "hardware__slug", "lane")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        waiting[stage_queue(row["stage"], row["hardware__slug"], row["lane"])] += row["n"]
    if not waiting:
        return []
    live = live_queues(now)
    served = [q for q in waiting if q in live]
    if not served:
        return []  # no worker for any of them: the rows wait without new messages
    try:
        messages = broker_state.pending_messages(served)
    except broker_state.UNREACHABLE as exc:  # nothing can be sent now; the next round retries
        outage.BROKER.note_down(exc)  # logged once per outage
        return []
    outage.BROKER.note_up()
    resent: list[int] = []
    stale_rows = Q(enqueued_at__lt=cutoff) | Q(enqueued_at__isnull=True)
    for q in served:
        missing = missing_messages(waiting[q], messages.get(q, 0))
        if not missing:
            continue
        ids = []
        for pk in (
            Evaluation.objects.filter(_of_queue(q), state=Evaluation.QUEUED)
            .filter(stale_rows)
            .order_by(F("enqueued_at").asc(nulls_first=True), "pk")
            .values_list("pk", flat=True)
            .iterator()
        ):
            # one winner per row: only the caller whose UPDATE matched re-sends it
            if Evaluation.objects.filter(pk=pk, state=Evaluation.QUEUED).filter(stale_rows).update(enqueued_at=now):
                ids.append(pk)
                if len(ids) >= missing:
                    break
        if ids:
            enqueue_many(ids, q)
            resent.extend(ids)
    if resent or expired:
        log.info("reconciler: %d lease(s) expired, %d message(s) re-sent", expired, len(resent))
    return resent
