"""Progress of a submission's evaluations, for its page, the status API and the CLI."""

from __future__ import annotations

from django.db.models import Case, Count, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce

from catalog.models import Baseline
from evaluator.health import live_workers_for
from evaluator.models import Evaluation, current_versions
from evaluator.queue_status import submission_queue
from evaluator.queues import hardware_queue
from jaxbench.record import Outcome
from jaxbench.verdict import review as review_rules
from submissions.models import Candidate


def submission_progress(submission) -> dict:
    """Counts by stage and state, outcomes so far, and a waiting notice per hardware queue.

    ``{"total": candidates, "done": finished candidates, "finished": bool, "stages": {stage: {state: n}},
       "outcomes": {outcome: n}, "held": n, "waiting_for": "tpu-v6e" | None, "precheck_saved": {...},
       "queue": evaluator.queue_status.submission_queue(...) while rows wait, else None}``

    A verdict held for review (TRUST.md 6) is finished work but counts under ``held`` (and the
    outcome ``held_for_review``), never under its measured outcome, until a staff member
    accepts it.

    Only rows of the current workload and harness versions (``current_versions``) are counted:
    where a submission has rows of earlier versions, a candidate with no current row counts as
    done (its results are of an earlier version, listed apart) and one being re-scored counts as
    done once its new row is. So a re-score's progress runs from what is left to measure to
    100%, never past it."""
    total = submission.candidates.count()
    first = Evaluation.PRECHECK if submission.hardware.prechecked else Evaluation.MAIN
    rows = (
        Evaluation.objects.filter(candidate__submission=submission)
        .annotate(current=Case(When(current_versions(), then=Value(True)), default=Value(False)))
        .values("stage", "state", "outcome", "review", "current")
        .annotate(n=Count("id"))
        .order_by()
    )
    stages: dict[str, dict[str, int]] = {}
    outcomes: dict[str, int] = {}
    main_final = pre_stopped = held = scheduled = earlier = 0
    for r in rows:
        if not r["current"]:
            earlier += r["n"]
            continue
        if r["stage"] == first:
            scheduled += r["n"]  # one first-stage row of the current versions per candidate
        stages.setdefault(r["stage"], {}).setdefault(r["state"], 0)
        stages[r["stage"]][r["state"]] += r["n"]
        final = r["state"] in Evaluation.FINAL_STATES
        if r["stage"] == Evaluation.MAIN and final:
            main_final += r["n"]
        if r["stage"] == Evaluation.PRECHECK and r["state"] == Evaluation.SKIPPED:
            pre_stopped += r["n"]
        # The outcome that counts for a candidate: its main stage, or the pre-check that stopped it.
        if final and r["outcome"] and (r["stage"] == Evaluation.MAIN or r["state"] == Evaluation.SKIPPED):
            shown = review_rules.shown_outcome(r["outcome"], r["review"])
            outcomes[shown] = outcomes.get(shown, 0) + r["n"]
            if review_rules.is_held(r["review"]):
                held += r["n"]
    done = main_final + pre_stopped
    if earlier:  # candidates without a row of the current versions: their earlier results are final
        done += max(0, total - scheduled)
    hw = submission.hardware
    waiting_for = None
    main = stages.get(Evaluation.MAIN, {})
    if main.get(Evaluation.QUEUED) and hw.is_accelerator:
        if not live_workers_for(hardware_queue(hw.slug)):
            waiting_for = hw.slug
    saved_s = None
    if pre_stopped and hw.is_accelerator:
        saved_s = _estimated_accelerator_seconds(submission, pre_stopped)
    finished = total > 0 and done >= total
    return {
        "total": total,
        "done": done,
        "finished": finished,
        "percent": round(100.0 * done / total, 1) if total else 100.0,
        "stages": stages,
        "outcomes": outcomes,
        "held": held,
        "waiting_for": waiting_for,
        "precheck_saved": {"candidates": pre_stopped, "estimated_accelerator_seconds": saved_s},
        "queue": None if finished else submission_queue(submission),
    }


# The cost of one accelerator evaluation beyond the kernel itself: compile, 3 correctness runs,
# 55 timed runs, process start. A conservative figure the page shows as an estimate.
ACCELERATOR_OVERHEAD_S = 20.0


def _estimated_accelerator_seconds(submission, n_stopped: int) -> float:
    stopped = Evaluation.objects.filter(
        candidate__submission=submission, stage=Evaluation.PRECHECK, state=Evaluation.SKIPPED
    ).values_list("candidate__workload_id", flat=True)
    medians = dict(Baseline.objects.filter(hardware=submission.hardware).values_list("workload_id", "median_s"))
    total = 0.0
    for wid in stopped:
        total += ACCELERATOR_OVERHEAD_S + 60 * medians.get(wid, 0.0)
    return round(total, 1)


def progress_annotations(qs):
    """Annotate a Submission queryset with n_total, n_done, n_faster, n_tie (one query)."""
    final = Q(stage=Evaluation.MAIN, state__in=Evaluation.FINAL_STATES) | Q(
        stage=Evaluation.PRECHECK, state=Evaluation.SKIPPED
    )
    done = (
        Evaluation.objects.filter(final, candidate__submission=OuterRef("pk"))
        .values("candidate__submission")
        .annotate(n=Count("id"))
        .values("n")
    )

    def of_outcome(outcome):
        return (
            Evaluation.objects.filter(candidate__submission=OuterRef("pk"), stage=Evaluation.MAIN, outcome=outcome)
            .exclude(review=review_rules.HELD)  # held means held: not faster until accepted
            .values("candidate__submission")
            .annotate(n=Count("id"))
            .values("n")
        )

    # faster only when the speedup's 95% interval lies above 1; a tie is within noise of XLA
    faster, ties = of_outcome(Outcome.CORRECT_FASTER), of_outcome(Outcome.CORRECT_TIE)
    total = Candidate.objects.filter(submission=OuterRef("pk")).values("submission").annotate(n=Count("id")).values("n")
    zero = Value(0, output_field=IntegerField())
    return qs.annotate(
        n_total=Coalesce(Subquery(total, output_field=IntegerField()), zero),
        n_done=Coalesce(Subquery(done, output_field=IntegerField()), zero),
        n_faster=Coalesce(Subquery(faster, output_field=IntegerField()), zero),
        n_tie=Coalesce(Subquery(ties, output_field=IntegerField()), zero),
    )


def held_count():
    """A Submission annotation: how many of its verdicts are held for review (one subquery the
    partial index on held rows answers). Beside no aggregate such as ``Count("candidates")``:
    that groups by this correlated subquery, evaluated once per joined row (issue 34 item 8)."""
    held = (
        Evaluation.objects.filter(candidate__submission=OuterRef("pk"), review=review_rules.HELD)
        .values("candidate__submission")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(held, output_field=IntegerField()), Value(0, output_field=IntegerField()))
