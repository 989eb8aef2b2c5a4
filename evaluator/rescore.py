"""Re-scoring: evaluate a submission's candidates again under the current workload versions.

A workload version bump (jaxbench/workloads/versions.py) takes the earlier version's results off
the boards (the aggregates fold the current version only). ``rescore_submission`` schedules, for
every candidate whose workload has no evaluation row of its current version yet, a NEW row of
that version through the intake's own scheduling (``pipeline.schedule_candidates``: identical
code already judged under the same version is reused at once, the rest is queued), on the
background lane so that users' uploads go first. The earlier rows stay as they are. Idempotent
by version: a second run finds every candidate with a current-version row and creates nothing.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Exists, F, OuterRef

from evaluator.models import Evaluation
from evaluator.pipeline import first_stage, schedule_candidates
from evaluator.queues import BACKGROUND_LANE
from submissions.models import Submission


def stale_candidates(submission, workload_wid: str | None = None):
    """``submission``'s candidates (of ``workload_wid`` only, when given) without an evaluation
    row of their workload's current version on the submission's hardware."""
    current = Evaluation.objects.filter(
        candidate=OuterRef("pk"),
        hardware_id=submission.hardware_id,
        stage=first_stage(submission.hardware),
        workload_version=OuterRef("workload__version"),
    )
    qs = submission.candidates.annotate(has_current=Exists(current)).filter(has_current=False)
    if workload_wid is not None:
        qs = qs.filter(workload__wid=workload_wid)
    return qs


def rescore_submission(submission, workload_wid: str | None = None, lane: str = BACKGROUND_LANE) -> dict:
    """Schedule the current version of every stale candidate; returns ``{"scheduled": rows
    created, "queued": rows left to evaluate, "reused": rows judged at once}``."""
    with transaction.atomic():
        stale = list(stale_candidates(submission, workload_wid).values_list("pk", flat=True))
        if not stale:
            return {"scheduled": 0, "queued": 0, "reused": 0}
        waiting = schedule_candidates(submission, submission.candidates.filter(pk__in=stale), lane)
    return {"scheduled": len(stale), "queued": len(waiting), "reused": len(stale) - len(waiting)}


def submissions_touching(workload_wid: str):
    """Submissions with a candidate of ``workload_wid`` evaluated under an earlier version."""
    earlier = Evaluation.objects.filter(
        candidate__submission=OuterRef("pk"), candidate__workload__wid=workload_wid
    ).exclude(workload_version=F("candidate__workload__version"))
    return Submission.objects.filter(Exists(earlier))
