"""Highlight ahead the kernels the submission pages show (``leaderboard.highlight.store``).

New kernels are highlighted by the worker and at intake; run this once on a database filled
before that (or after a Pygments upgrade, whose HTML is stored apart), so that no visitor's
first view of a submission page highlights its sources on the request."""

import time

from django.core.management.base import BaseCommand

from leaderboard import highlight
from leaderboard.shown_sources import shown_sources
from submissions.models import Submission


class Command(BaseCommand):
    help = "Store the syntax-highlighted HTML of every kernel a submission page shows."

    def add_arguments(self, parser):
        parser.add_argument("submissions", nargs="*", type=int, help="submission ids (default: all)")

    def handle(self, *args, submissions=None, verbosity=1, **opts):
        qs = Submission._base_manager.order_by("pk")  # test runs too: their owner's preview shows them
        if submissions:
            qs = qs.filter(pk__in=submissions)
        t0, written, n = time.perf_counter(), 0, 0
        for submission in qs.only("pk", "kind", "hardware_id").iterator():
            written += highlight.store(shown_sources(submission))
            n += 1
        took = time.perf_counter() - t0
        self.stdout.write(self.style.SUCCESS(f"{written} sources highlighted for {n} submissions in {took:.1f}s"))
