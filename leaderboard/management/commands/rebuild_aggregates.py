"""Recompute the leaderboard aggregates from the evaluations (all submissions, or some)."""

import time

from django.core.management.base import BaseCommand

from leaderboard.aggregates.refresh import rebuild_all
from submissions.models import Submission


class Command(BaseCommand):
    help = "Rebuild the leaderboard aggregates (SubmissionSummary, WorkloadResult) from the evaluations."

    def add_arguments(self, parser):
        parser.add_argument("submissions", nargs="*", type=int, help="submission ids (default: all)")
        parser.add_argument("--hardware", help="only submissions on this hardware target")

    def handle(self, *args, submissions=None, hardware=None, verbosity=1, **opts):
        qs = Submission.objects.all()
        if submissions:
            qs = qs.filter(pk__in=submissions)
        if hardware:
            qs = qs.filter(hardware__slug=hardware)
        t0 = time.perf_counter()

        def progress(sub, n):
            if verbosity > 1:
                self.stdout.write(f"  rebuilt #{sub.pk}")

        n = rebuild_all(qs, progress=progress)
        self.stdout.write(self.style.SUCCESS(f"rebuilt {n} submissions in {time.perf_counter() - t0:.1f}s"))
