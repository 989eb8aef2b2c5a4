"""A new trace's self-reported summary is built once its intake transaction commits, so that
its reported results can be shown (apart, unranked) before any evaluation finishes."""
from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver


@receiver(post_save, sender="portal.Submission", dispatch_uid="leaderboard-reported-summary")
def build_reported_summary(sender, instance, created, raw=False, **kwargs):
    if not created or raw:
        return
    submission_id = instance.pk

    def build():
        from leaderboard.aggregates import ensure_reported
        try:
            ensure_reported(submission_id)
        except Exception:  # never break an intake for a leaderboard summary
            import logging
            logging.getLogger(__name__).exception("self-reported summary of submission %s", submission_id)

    transaction.on_commit(build)
