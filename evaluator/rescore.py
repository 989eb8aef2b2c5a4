"""Re-scoring: evaluate a submission's candidates again under the current workload versions and
the current harness.

A workload version bump (jaxbench/workloads/versions.py) or a new harness version
(jaxbench.HARNESS_VERSION) takes the earlier results off the boards (the aggregates fold the
current versions only: ``evaluator.models.current_versions``). ``rescore_submission`` schedules,
for every candidate without an evaluation row of its workload's current version under the
current harness yet, a NEW row of those versions through the intake's own scheduling
(``pipeline.schedule_candidates``: identical code already judged under the same versions is
reused at once, the rest is queued), on the background lane so that users' uploads go first. The
earlier rows stay as they are. Idempotent by version: a second run finds every candidate with a
current row (queued, running or final) and creates nothing. ``rescore_progress`` follows the new
rows to their final states (``manage.py rescore --wait``).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q

from evaluator.models import Evaluation, current_harness_version, current_versions
from evaluator.pipeline import first_stage, schedule_candidates
from evaluator.queues import BACKGROUND_LANE
from submissions.models import Submission


def stale_candidates(submission, workload_wid: str | None = None):
    """``submission``'s candidates (of ``workload_wid`` only, when given) without an evaluation
    row of their workload's current version under the current harness on the submission's
    hardware."""
    current = Evaluation.objects.filter(
        candidate=OuterRef("pk"),
        hardware_id=submission.hardware_id,
        stage=first_stage(submission.hardware),
        workload_version=OuterRef("workload__version"),
        harness_version=current_harness_version(),
    )
    qs = submission.candidates.annotate(has_current=Exists(current)).filter(has_current=False)
    if workload_wid is not None:
        qs = qs.filter(workload__wid=workload_wid)
    return qs


def rescore_submission(submission, workload_wid: str | None = None, lane: str = BACKGROUND_LANE) -> dict:
    """Schedule the current versions of every stale candidate; returns ``{"scheduled": rows
    created, "queued": rows left to evaluate, "reused": rows judged at once}``."""
    with transaction.atomic():
        stale = list(stale_candidates(submission, workload_wid).values_list("pk", flat=True))
        if not stale:
            return {"scheduled": 0, "queued": 0, "reused": 0}
        waiting = schedule_candidates(submission, submission.candidates.filter(pk__in=stale), lane)
    return {"scheduled": len(stale), "queued": len(waiting), "reused": len(stale) - len(waiting)}


def submissions_touching(workload_wid: str):
    """Submissions with a candidate of ``workload_wid`` evaluated under an earlier workload
    version or an earlier harness."""
    earlier = Evaluation.objects.filter(
        candidate__submission=OuterRef("pk"), candidate__workload__wid=workload_wid
    ).exclude(current_versions())
    return Submission.objects.filter(Exists(earlier))


def submissions_with_earlier_results():
    """Submissions with any final evaluation of an earlier workload version or harness."""
    earlier = Evaluation.objects.filter(
        candidate__submission=OuterRef("pk"), state__in=(Evaluation.DONE, Evaluation.SKIPPED)
    ).exclude(current_versions())
    return Submission.objects.filter(Exists(earlier))


# a candidate's new row has its final outcome: the main stage's verdict (or its infrastructure
# failure), or a pre-check that stopped it or failed
_TERMINAL = Q(stage=Evaluation.MAIN, state__in=Evaluation.FINAL_STATES) | Q(
    stage=Evaluation.PRECHECK, state__in=(Evaluation.SKIPPED, Evaluation.FAILED)
)


def last_evaluation_id() -> int:
    """The newest evaluation row's id: a re-score's rows are those after it (``rescore_progress``)."""
    return Evaluation.objects.aggregate(m=Max("id"))["m"] or 0


def rescore_progress(submission_ids, after_id: int) -> dict:
    """How far the rows a re-score created for ``submission_ids`` (ids above ``after_id``) are:
    ``{"done": candidates with their final outcome under the current versions, "outcomes":
    {outcome or state: candidates} of those}`` (one query)."""
    rows = (
        Evaluation.objects.filter(
            _TERMINAL, current_versions(), candidate__submission_id__in=list(submission_ids), pk__gt=after_id
        )
        .values_list("candidate_id", "state", "outcome")
        .order_by()
    )
    done: dict[int, str] = {}
    for cand, state, outcome in rows:
        done[cand] = outcome or state
    outcomes: dict[str, int] = {}
    for o in done.values():
        outcomes[o] = outcomes.get(o, 0) + 1
    return {"done": len(done), "outcomes": outcomes}
