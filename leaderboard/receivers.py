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
from leaderboard.aggregates.refresh import ensure_reported, refresh_for_evaluation
from submissions.models import Candidate, Submission

log = logging.getLogger(__name__)

# Above this many candidates the self-reported summary is built off the request thread.
BACKGROUND_OVER = 200


def _build(submission_id: int, close: bool = False) -> None:
    try:
        ensure_reported(submission_id)
    except Exception:  # never break an intake for a leaderboard summary
        log.exception("self-reported summary of submission %s", submission_id)
    finally:
        if close:
            connection.close()  # the thread's own connection


@receiver(post_save, sender=Submission, dispatch_uid="leaderboard-reported-summary")
def build_reported_summary(sender, instance, created, raw=False, **kwargs):
    if not created or raw:
        return
    submission_id = instance.pk

    def build():
        if Candidate.objects.filter(submission_id=submission_id).count() <= BACKGROUND_OVER:
            _build(submission_id)
            return
        threading.Thread(
            target=_build, args=(submission_id, True), daemon=True, name="jaxbench-reported-summary"
        ).start()

    transaction.on_commit(build)


@receiver(evaluation_finished, dispatch_uid="leaderboard-refresh-aggregates")
def fold_finished_evaluation(sender, evaluation, **kwargs):
    refresh_for_evaluation(evaluation)
