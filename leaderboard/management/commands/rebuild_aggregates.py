"""Recompute the leaderboard aggregates from the evaluations (all submissions, or some).

Only evaluations of each workload's current version (catalog.Workload.version, as synced from
the registry) measured under the current harness (jaxbench.HARNESS_VERSION) are folded: run it
after ``sync_registry`` brings a workload version bump, and after deploying a new harness
version; the results of the earlier versions leave the boards (they are kept, and re-scoring
with ``manage.py rescore`` measures them under the current ones)."""

import time

from django.core.management.base import BaseCommand
from django.db.models import F

from evaluator.models import Evaluation, current_harness_version, current_versions
from leaderboard.aggregates.refresh import rebuild_all
from submissions.models import Submission


class Command(BaseCommand):
    help = "Rebuild the leaderboard aggregates (SubmissionSummary, WorkloadResult) from the evaluations."

    def add_arguments(self, parser):
        parser.add_argument("submissions", nargs="*", type=int, help="submission ids (default: all)")
        parser.add_argument("--hardware", help="only submissions on this hardware target")

    def handle(self, *args, submissions=None, hardware=None, verbosity=1, **opts):
        # the base manager: test runs too (Submission.objects leaves them out; their owner's preview reads them)
        qs = Submission._base_manager.all()
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
        kept = Evaluation.objects.filter(candidate__submission__in=qs).exclude(current_versions())
        earlier = kept.exclude(workload_version=F("candidate__workload__version")).count()
        if earlier:
            self.stdout.write(
                f"{earlier} evaluations of an earlier workload version kept, not folded (manage.py rescore)"
            )
        harness = kept.filter(workload_version=F("candidate__workload__version")).count()
        if harness:
            self.stdout.write(
                f"{harness} evaluations of an earlier harness kept, not folded: the current one is "
                f"{current_harness_version()} (manage.py rescore)"
            )
