"""Scheduling: turn candidates into Evaluation rows and wake the right workers.

The rows are created inside the caller's transaction and the messages are sent only after it
commits (``transaction.on_commit``): a worker never sees an ID that is not yet in the database,
and a rolled-back intake sends nothing. A lost message is harmless: the reconciler re-sends
every queued row whose message may be gone. Identical code already judged is not queued at all:
its verdict is reused at intake (evaluator/reuse.py).
"""

from __future__ import annotations

import logging
import threading

import dramatiq
from django.db import transaction
from django.utils import timezone

from evaluator import outage
from evaluator.broker import UNREACHABLE
from evaluator.models import Evaluation, current_versions
from evaluator.queues import BACKGROUND_LANE, USER_LANE, lane_of_queue, stage_queue
from evaluator.reuse import reuse_at_intake
from submissions.bulk import insert_rows

log = logging.getLogger(__name__)

# Messages name the actor instead of importing it: actors -> runner -> pipeline stays one-way.
EVALUATE_ACTOR = "evaluate"
# the same work at a lower priority, for the background lane (evaluator/queues.py)
EVALUATE_BACKGROUND_ACTOR = "evaluate_background"


def actor_for(queue: str) -> str:
    return EVALUATE_ACTOR if lane_of_queue(queue)[0] == USER_LANE else EVALUATE_BACKGROUND_ACTOR


def first_stage(hardware) -> str:
    """TPU targets start with the CPU pre-check (lowering for TPU, TPU interpret mode); GPU
    targets and the cpu target run one stage (``HardwareTarget.prechecked``)."""
    return Evaluation.PRECHECK if hardware.prechecked else Evaluation.MAIN


def schedule_submission(submission, lane: str = USER_LANE) -> list[int]:
    """Create the first-stage Evaluation row of every candidate of ``submission``, store at once
    the verdict of every row whose identical code was already judged (evaluator/reuse.py), and
    enqueue the rest after commit on ``lane``'s queue. Must run inside the intake's transaction.
    Returns the ids of the rows left to evaluate."""
    return schedule_candidates(submission, None, lane)


def schedule_candidates(submission, candidates, lane: str = USER_LANE) -> list[int]:
    """``schedule_submission`` for some of ``submission``'s candidates (a queryset), each under
    its workload's current version and the current harness (the rows' default): the intake
    passes None (all of them), a re-score (evaluator/rescore.py) those without a row of the
    current versions. Must run inside a transaction."""
    stage = first_stage(submission.hardware)
    now = timezone.now()
    hw = submission.hardware_id
    qs = submission.candidates.all() if candidates is None else candidates
    cids = list(qs.order_by("pk").values_list("id", "code_sha256", "workload__version"))
    insert_rows(
        Evaluation,
        ("candidate_id", "hardware_id", "stage", "lane", "code_sha256", "enqueued_at", "workload_version"),
        ((cid, hw, stage, lane, sha, now, version) for cid, sha, version in cids),
    )
    mine = Evaluation.objects.filter(current_versions(), candidate__submission=submission, stage=stage, hardware_id=hw)
    if candidates is not None:
        mine = mine.filter(candidate_id__in=[c for c, _, _ in cids])
    rows = mine.order_by("pk").values_list("pk", "code_sha256", "candidate__workload_id")
    reused, waiting = reuse_at_intake(submission.hardware, stage, rows)
    queue = stage_queue(stage, submission.hardware.slug, lane)
    later = []
    passed = [ev.candidate_id for ev in reused if ev.stage == Evaluation.PRECHECK and ev.state == Evaluation.DONE]
    if passed:  # a reused pre-check that passed: its main stage, itself perhaps already judged
        insert_rows(
            Evaluation,
            ("candidate_id", "hardware_id", "stage", "lane", "code_sha256", "enqueued_at", "workload_version"),
            (
                (cid, hw, Evaluation.MAIN, lane, sha, now, version)
                for cid, sha, version in submission.candidates.filter(pk__in=passed)
                .order_by("pk")
                .values_list("id", "code_sha256", "workload__version")
            ),
        )
        main_rows = (
            Evaluation.objects.filter(current_versions(), candidate_id__in=passed, stage=Evaluation.MAIN)
            .order_by("pk")
            .values_list("pk", "code_sha256", "candidate__workload_id")
        )
        _, later = reuse_at_intake(submission.hardware, Evaluation.MAIN, main_rows)
    main_queue = stage_queue(Evaluation.MAIN, submission.hardware.slug, lane)

    def wake():
        enqueue_soon(waiting, queue)
        if later:
            enqueue_soon(later, main_queue)

    transaction.on_commit(wake)
    return waiting + later


def move_to_user_lane(submission) -> list[int]:
    """Move ``submission``'s unfinished background-lane rows to the user lane (a test run
    promoted to a submission) and, after commit, send its queued ones to the user queues; a
    running row's next stage follows it there (runner.finish reads the lane under its lock).
    The background messages already sent find their row taken or moved: claim() runs each row
    once, whichever message comes first. Must run inside a transaction; returns the queued ids."""
    rows = Evaluation.objects.filter(
        candidate__submission=submission,
        lane=BACKGROUND_LANE,
        state__in=(Evaluation.QUEUED, Evaluation.RUNNING),
    )
    queued = list(rows.filter(state=Evaluation.QUEUED).values_list("pk", "stage", "hardware__slug"))
    rows.update(lane=USER_LANE)
    by_queue: dict[str, list[int]] = {}
    for pk, stage, slug in queued:
        by_queue.setdefault(stage_queue(stage, slug, USER_LANE), []).append(pk)

    def wake():
        for queue, ids in by_queue.items():
            enqueue_soon(ids, queue)

    transaction.on_commit(wake)
    return [pk for pk, _, _ in queued]


# Above this many messages, sending happens off the request thread: a 7,200-sample trace must
# not hold its upload response. If the process dies meanwhile, the reconciler re-sends the rows.
BACKGROUND_ENQUEUE_OVER = 200


def enqueue_soon(evaluation_ids, queue: str) -> None:
    if not evaluation_ids:
        return
    if len(evaluation_ids) <= BACKGROUND_ENQUEUE_OVER:
        enqueue_many(evaluation_ids, queue)
        return
    threading.Thread(
        target=enqueue_many, args=(list(evaluation_ids), queue), daemon=True, name="jaxbench-enqueue"
    ).start()


def enqueue_many(evaluation_ids, queue: str) -> None:
    broker = dramatiq.get_broker()
    broker.declare_queue(queue)
    actor = actor_for(queue)
    for eid in evaluation_ids:
        try:
            broker.enqueue(dramatiq.Message(queue_name=queue, actor_name=actor, args=(eid,), kwargs={}, options={}))
        except UNREACHABLE as exc:  # broker away: the rows stay queued and the reconciler re-sends them
            outage.BROKER.note_down(exc)  # one line per outage, not one per row
            return
        except Exception:
            log.warning("could not enqueue evaluation %s on %s; the reconciler will retry", eid, queue, exc_info=True)
            return
    outage.BROKER.note_up()
