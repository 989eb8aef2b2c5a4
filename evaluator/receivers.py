"""The evaluator's answers to what the submissions app announces."""

from django.dispatch import receiver

from evaluator.pipeline import schedule_submission
from evaluator.queues import BACKGROUND_LANE, USER_LANE
from submissions.signals import submission_stored


@receiver(submission_stored, dispatch_uid="evaluator-schedule-submission")
def schedule_stored_submission(sender, submission, background=False, **kwargs):
    # Inside the intake's transaction: the evaluation rows are stored with the candidates or not
    # at all, and the workers are woken only after the commit. Demo and maintenance uploads
    # (background=True) wait behind every user's work.
    schedule_submission(submission, lane=BACKGROUND_LANE if background else USER_LANE)
