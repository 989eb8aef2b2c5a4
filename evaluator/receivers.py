"""The evaluator's answers to what the submissions app announces."""

from django.dispatch import receiver

from evaluator.pipeline import schedule_submission
from submissions.signals import submission_stored


@receiver(submission_stored, dispatch_uid="evaluator-schedule-submission")
def schedule_stored_submission(sender, submission, **kwargs):
    # Inside the intake's transaction: the evaluation rows are stored with the candidates or not
    # at all, and the workers are woken only after the commit.
    schedule_submission(submission)
