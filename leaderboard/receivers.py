"""The leaderboard's answers to what the apps below it announce.

A finished evaluation (``evaluator.signals.evaluation_finished``) is folded into the aggregates
inside the verdict's transaction: they commit or roll back together, so a page never shows a
verdict without its aggregate or the other way round.

A new trace's self-reported summary is built once its intake transaction commits, so that
its reported results can be shown (apart, unranked) before any evaluation finishes.

For a large trace the build (a fold of every sample: ~0.4 s for 7,200) runs on a background
thread after the commit, so the upload's response does not wait for it (issue 13). That is
safe: the summary is derived, display-only data, and ``ensure_reported`` is idempotent and runs
again when the trace's first evaluation is folded (``aggregates.refresh_for_evaluation``), so a
process that dies before the thread finishes only delays it."""

import logging
import threading

from django.db import connection, transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from evaluator.signals import evaluation_finished
from leaderboard import highlight
from leaderboard.aggregates.refresh import ensure_reported, refresh_for_evaluation
from leaderboard.shown_sources import shown_sources
from submissions.models import Candidate, Submission

log = logging.getLogger(__name__)

# Above this many candidates the self-reported summary is built off the request thread.
BACKGROUND_OVER = 200


def _build(submission_id: int, plain: bool, close: bool = False) -> None:
    try:
        ensure_reported(submission_id)
    except Exception:  # never break an intake for a leaderboard summary
        log.exception("self-reported summary of submission %s", submission_id)
    try:
        if plain:
            _highlight_shown(submission_id)
    finally:
        if close:
            connection.close()  # the thread's own connection


def _highlight_shown(submission_id: int) -> None:
    """A plain submission's page shows its kernels from the start: highlight them ahead."""
    try:
        highlight.store(shown_sources(Submission._base_manager.get(pk=submission_id)))
    except Exception:  # display-only: the page highlights what is missing itself
        log.exception("highlighting the kernels of submission %s", submission_id)


@receiver(post_save, sender=Submission, dispatch_uid="leaderboard-reported-summary")
def build_reported_summary(sender, instance, created, raw=False, **kwargs):
    if not created or raw:
        return
    submission_id, plain = instance.pk, instance.kind != Submission.TRACE

    def build():
        if Candidate.objects.filter(submission_id=submission_id).count() <= BACKGROUND_OVER:
            _build(submission_id, plain)
            return
        threading.Thread(
            target=_build, args=(submission_id, plain, True), daemon=True, name="jaxbench-reported-summary"
        ).start()

    transaction.on_commit(build)


def _keep_source_if_shown(candidate_id: int, result) -> None:
    """After a fold: the candidate's HTML when its submission page shows it (every kernel of a
    plain submission, a trace's best sample of the workload). After the verdict's commit, so
    that nothing here can roll a verdict back."""
    try:
        c = Candidate.objects.filter(pk=candidate_id).values("code_sha256", "code", "index", "submission__kind").first()
        if c is None:
            return
        if c["submission__kind"] == Submission.TRACE and (result is None or result.best_index != c["index"]):
            return
        highlight.store([(c["code_sha256"], c["code"])])
    except Exception:  # display-only: the page highlights what is missing itself
        log.exception("highlighting the kernel of candidate %s", candidate_id)


@receiver(evaluation_finished, dispatch_uid="leaderboard-refresh-aggregates")
def fold_finished_evaluation(sender, evaluation, **kwargs):
    result = refresh_for_evaluation(evaluation)
    candidate_id = evaluation.candidate_id
    transaction.on_commit(lambda: _keep_source_if_shown(candidate_id, result))
