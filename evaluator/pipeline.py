"""Scheduling: turn candidates into Evaluation rows and wake the right workers.

The rows are created inside the caller's transaction and the messages are sent only after it
commits (``transaction.on_commit``): a worker never sees an ID that is not yet in the database,
and a rolled-back intake sends nothing. A lost message is harmless: the reconciler re-sends
every queued row whose message may be gone.
"""

from __future__ import annotations

import logging
import threading

import dramatiq
from django.db import transaction
from django.utils import timezone

from evaluator import outage
from evaluator.broker import UNREACHABLE
from evaluator.models import Evaluation
from evaluator.queues import stage_queue
from submissions.bulk import insert_rows

log = logging.getLogger(__name__)

# Messages name the actor instead of importing it: actors -> runner -> pipeline stays one-way.
EVALUATE_ACTOR = "evaluate"


def first_stage(hardware) -> str:
    """TPU targets start with the CPU pre-check (lowering for TPU, TPU interpret mode); GPU
    targets and the cpu target run one stage (``HardwareTarget.prechecked``)."""
    return Evaluation.PRECHECK if hardware.prechecked else Evaluation.MAIN


def schedule_submission(submission) -> list[int]:
    """Create the first-stage Evaluation row of every candidate of ``submission`` and enqueue
    them after commit. Must run inside the intake's transaction."""
    stage = first_stage(submission.hardware)
    now = timezone.now()
    hw = submission.hardware_id
    insert_rows(
        Evaluation,
        ("candidate_id", "hardware_id", "stage", "code_sha256", "enqueued_at"),
        (
            (cid, hw, stage, sha, now)
            for cid, sha in submission.candidates.order_by("pk").values_list("id", "code_sha256")
        ),
    )
    ids = list(
        Evaluation.objects.filter(candidate__submission=submission, stage=stage)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    queue = stage_queue(stage, submission.hardware.slug)
    transaction.on_commit(lambda: enqueue_soon(ids, queue))
    return ids


# Above this many messages, sending happens off the request thread: a 7,200-sample trace must
# not hold its upload response. If the process dies meanwhile, the reconciler re-sends the rows.
BACKGROUND_ENQUEUE_OVER = 200


def enqueue_soon(evaluation_ids, queue: str) -> None:
    if len(evaluation_ids) <= BACKGROUND_ENQUEUE_OVER:
        enqueue_many(evaluation_ids, queue)
        return
    threading.Thread(
        target=enqueue_many, args=(list(evaluation_ids), queue), daemon=True, name="jaxbench-enqueue"
    ).start()


def enqueue_many(evaluation_ids, queue: str) -> None:
    broker = dramatiq.get_broker()
    broker.declare_queue(queue)
    for eid in evaluation_ids:
        try:
            broker.enqueue(
                dramatiq.Message(queue_name=queue, actor_name=EVALUATE_ACTOR, args=(eid,), kwargs={}, options={})
            )
        except UNREACHABLE as exc:  # broker away: the rows stay queued and the reconciler re-sends them
            outage.BROKER.note_down(exc)  # one line per outage, not one per row
            return
        except Exception:
            log.warning("could not enqueue evaluation %s on %s; the reconciler will retry", eid, queue, exc_info=True)
            return
    outage.BROKER.note_up()
