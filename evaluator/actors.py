"""Dramatiq actors. Messages carry only row IDs: the database holds every job's state.

``evaluate`` is declared on ``eval.cpu`` but every message is sent to the queue of its
evaluation (``precheck`` or ``eval.<hardware>``, see evaluator/pipeline.py); a worker consumes
only its own hardware's queues (evaluator/worker_middleware.py).
"""

import logging

import dramatiq
from django.conf import settings
from django.utils import timezone

from catalog.models import HardwareTarget, Workload
from evaluator import experts_sweep
from evaluator.models import QueuePing
from evaluator.queues import BACKGROUND_LANE, BACKGROUND_PRIORITY, DECLARED_QUEUE, MAINTENANCE_QUEUE, hardware_queue
from evaluator.reconciler import reconcile
from evaluator.runner import baseline_for, run_evaluation
from evaluator.workers import worker_name

log = logging.getLogger(__name__)

EVALUATION_TIME_LIMIT_MS = settings.JAXBENCH_EVALUATION_TIME_LIMIT_S * 1000


@dramatiq.actor(
    queue_name=DECLARED_QUEUE, max_retries=8, min_backoff=1000, max_backoff=120_000, time_limit=EVALUATION_TIME_LIMIT_MS
)
def evaluate(evaluation_id: int):
    status = run_evaluation(evaluation_id)
    log.info("evaluation %s: %s", evaluation_id, status)


@dramatiq.actor(
    queue_name=DECLARED_QUEUE,
    max_retries=8,
    min_backoff=1000,
    max_backoff=120_000,
    time_limit=EVALUATION_TIME_LIMIT_MS,
    priority=BACKGROUND_PRIORITY,
)
def evaluate_background(evaluation_id: int):
    """``evaluate`` for the background lane (demo, maintenance): a worker runs it only when no
    user evaluation it has fetched waits (evaluator/queues.py)."""
    status = run_evaluation(evaluation_id)
    log.info("evaluation %s (background): %s", evaluation_id, status)


@dramatiq.actor(queue_name=MAINTENANCE_QUEUE, max_retries=3)
def reconcile_now():
    reconcile()


@dramatiq.actor(queue_name=MAINTENANCE_QUEUE, max_retries=3)
def answer_ping(ping_id: int):
    QueuePing.objects.filter(pk=ping_id).update(answered_at=timezone.now(), answered_by=worker_name())


def send_ping(queue: str):
    """Create a ping row and send it through ``queue`` (any queue a worker consumes)."""
    ping = QueuePing.objects.create(queue=queue)
    broker = dramatiq.get_broker()
    broker.declare_queue(queue)
    broker.enqueue(answer_ping.message_with_options(args=(ping.pk,)).copy(queue_name=queue))
    return ping


@dramatiq.actor(
    queue_name=DECLARED_QUEUE,
    max_retries=3,
    min_backoff=5000,
    time_limit=EVALUATION_TIME_LIMIT_MS * 4,
    priority=BACKGROUND_PRIORITY,
)
def sweep_expert(workload_wid: str, hardware_slug: str, limit: int | None = None):
    """Sweep one expert kernel on the worker of its hardware, in the background lane (sent to
    ``background.eval.<hardware>``): maintenance work that never delays a user's evaluation."""
    wl = Workload.objects.get(wid=workload_wid)
    hw = HardwareTarget.objects.get(slug=hardware_slug)
    ref = experts_sweep.sweep_expert(wl, hw, baseline_for(wl, hw).record, limit=limit)
    log.info("expert %s on %s: %s %s", workload_wid, hardware_slug, ref.outcome, ref.speedup)


def send_expert_sweeps(hardware_slug: str, workload_wids, limit: int | None = None) -> None:
    broker = dramatiq.get_broker()
    queue = hardware_queue(hardware_slug, BACKGROUND_LANE)
    broker.declare_queue(queue)
    for wid in workload_wids:
        broker.enqueue(sweep_expert.message_with_options(args=(wid, hardware_slug, limit)).copy(queue_name=queue))
