"""Dramatiq actors. Messages carry only row IDs: the database holds every job's state."""
import logging
import os
import socket

import dramatiq
from django.utils import timezone

log = logging.getLogger(__name__)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


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
