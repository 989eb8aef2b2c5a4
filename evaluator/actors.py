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
