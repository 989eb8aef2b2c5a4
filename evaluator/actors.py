"""Dramatiq actors. Messages carry only row IDs: the database holds every job's state.

``evaluate`` is declared on ``eval.cpu`` but every message is sent to the queue of its
evaluation (``precheck`` or ``eval.<hardware>``, see evaluator/pipeline.py); a worker consumes
only its own hardware's queues (evaluator/worker_middleware.py).
"""
import logging
import os
import socket

import dramatiq
from django.utils import timezone

log = logging.getLogger(__name__)

EVALUATION_TIME_LIMIT_MS = int(os.environ.get("JAXBENCH_EVALUATION_TIME_LIMIT_S", "3600")) * 1000


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dramatiq.actor(queue_name="eval.cpu", max_retries=8, min_backoff=1000, max_backoff=120_000,
                time_limit=EVALUATION_TIME_LIMIT_MS)
def evaluate(evaluation_id: int):
    from evaluator.runner import run_evaluation
    status = run_evaluation(evaluation_id)
    log.info("evaluation %s: %s", evaluation_id, status)


@dramatiq.actor(queue_name="maintenance", max_retries=3)
def reconcile_now():
    from evaluator.runner import reconcile
    reconcile()


@dramatiq.actor(queue_name="maintenance", max_retries=3)
def answer_ping(ping_id: int):
    from evaluator.models import QueuePing
    QueuePing.objects.filter(pk=ping_id).update(answered_at=timezone.now(), answered_by=worker_name())


def send_ping(queue: str):
    """Create a ping row and send it through ``queue`` (any queue a worker consumes)."""
    from evaluator.models import QueuePing
    ping = QueuePing.objects.create(queue=queue)
    broker = dramatiq.get_broker()
    broker.declare_queue(queue)
    broker.enqueue(answer_ping.message_with_options(args=(ping.pk,)).copy(queue_name=queue))
    return ping


@dramatiq.actor(queue_name="eval.cpu", max_retries=3, min_backoff=5000, time_limit=EVALUATION_TIME_LIMIT_MS * 4)
def sweep_expert(workload_wid: str, hardware_slug: str, limit: int | None = None):
    """Sweep one expert kernel on the worker of its hardware (sent to ``eval.<hardware>``)."""
    from evaluator.experts_sweep import sweep_expert as run_sweep
    from evaluator.models import HardwareTarget, Workload
    from evaluator.runner import baseline_for
    wl = Workload.objects.get(wid=workload_wid)
    hw = HardwareTarget.objects.get(slug=hardware_slug)
    ref = run_sweep(wl, hw, baseline_for(wl, hw).record, limit=limit)
    log.info("expert %s on %s: %s %s", workload_wid, hardware_slug, ref.outcome, ref.speedup)


def send_expert_sweeps(hardware_slug: str, workload_wids, limit: int | None = None) -> None:
    broker = dramatiq.get_broker()
    queue = f"eval.{hardware_slug}"
    broker.declare_queue(queue)
    for wid in workload_wids:
        broker.enqueue(sweep_expert.message_with_options(args=(wid, hardware_slug, limit)).copy(queue_name=queue))
