"""The evaluator's answers to what the submissions app announces."""

from django.dispatch import receiver

from evaluator.pipeline import move_to_user_lane, schedule_submission
from evaluator.queues import BACKGROUND_LANE, USER_LANE
from submissions.signals import submission_stored, test_run_promoted


@receiver(submission_stored, dispatch_uid="evaluator-schedule-submission")
def schedule_stored_submission(sender, submission, background=False, **kwargs):
    # Inside the intake's transaction: the evaluation rows are stored with the candidates or not
    # at all, and the workers are woken only after the commit. Demo and maintenance uploads
    # (background=True) and test runs (private trials: they must never delay the board's
    # submissions) wait behind every user's work.
    lane = BACKGROUND_LANE if background or submission.test_run else USER_LANE
    schedule_submission(submission, lane=lane)


@receiver(test_run_promoted, dispatch_uid="evaluator-promoted-test-run")
def promote_lane(sender, submission, **kwargs):
    # now a real submission: what it has left to run goes ahead of the background work
    move_to_user_lane(submission)
