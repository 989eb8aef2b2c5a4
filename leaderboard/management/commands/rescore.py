"""Re-evaluate chosen submissions under the current workload and harness versions
(evaluator/rescore.py); ``--wait`` follows the new rows to their final states."""

import argparse
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from catalog.lookup import find_workload
from evaluator.rescore import (
    last_evaluation_id,
    rescore_progress,
    rescore_submission,
    submissions_touching,
    submissions_with_earlier_results,
)
from leaderboard.models import SubmissionSummary
from submissions.models import Submission


class Command(BaseCommand):
    help = (
        "Schedule new evaluation rows, under each workload's current version and the current harness, for "
        "the candidates of the chosen submissions that have none yet (earlier rows are kept; running it twice "
        "creates nothing new). Choose with --submission, --top N --hardware H, --workload WID or --earlier; "
        "--wait shows their progress until they are evaluated."
    )

    def add_arguments(self, parser):
        parser.add_argument("--submission", type=int, nargs="+", default=[], help="submission ids")
        parser.add_argument("--top", type=int, help="the N best-ranked public submissions of --hardware")
        parser.add_argument("--hardware", help="hardware target slug (with --top; narrows --earlier)")
        parser.add_argument(
            "--workload",
            help="every submission with results of an earlier version of this workload, or of it under an "
            "earlier harness (its candidates)",
        )
        parser.add_argument(
            "--earlier",
            action="store_true",
            help="every submission with results of an earlier workload version or an earlier harness",
        )
        parser.add_argument(
            "--wait", action="store_true", help="show a progress bar until every new row has its final outcome"
        )
        parser.add_argument("--timeout", type=float, default=24 * 3600, help="with --wait: stop waiting after this")
        parser.add_argument("--poll", type=float, default=2.0, help=argparse.SUPPRESS)

    def handle(self, *args, submission=(), top=None, hardware=None, workload=None, earlier=False, **opts):
        if top is not None and not hardware:
            raise CommandError("--top needs --hardware")
        chosen = self._choose(submission, top, hardware, workload, earlier)
        if not chosen:
            raise CommandError("nothing chosen: give --submission, --top N --hardware H, --workload WID or --earlier")
        if workload:
            workload = find_workload(workload).wid
        after = last_evaluation_id()
        totals = {"scheduled": 0, "queued": 0, "reused": 0}
        for i, s in enumerate(chosen, 1):
            got = rescore_submission(s, workload_wid=workload)
            for k in totals:
                totals[k] += got[k]
            self.stdout.write(
                f"rescore {i}/{len(chosen)}: submission #{s.pk}: {got['scheduled']} new rows "
                f"({got['queued']} queued, {got['reused']} reused)"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"rescored {len(chosen)} submissions: {totals['scheduled']} new rows "
                f"({totals['queued']} queued, {totals['reused']} reused)"
            )
        )
        if opts["wait"] and totals["scheduled"]:
            self._wait([s.pk for s in chosen], after, totals["scheduled"], opts["timeout"], opts["poll"])

    def _choose(self, submission, top, hardware, workload, earlier) -> list[Submission]:
        chosen: list[Submission] = []
        if submission:
            found = {s.pk: s for s in Submission.objects.filter(pk__in=submission).select_related("hardware")}
            missing = sorted(set(submission) - set(found))
            if missing:
                raise CommandError(f"no submission {', '.join(map(str, missing))}")
            chosen += [found[pk] for pk in submission]
        if top is not None:
            ranked = (
                SubmissionSummary.objects.filter(
                    hardware__slug=hardware,
                    source=SubmissionSummary.EVALUATED,
                    submission__published_at__isnull=False,
                    submission__withdrawn_at__isnull=True,
                )
                .select_related("submission__hardware")
                .order_by("-geomean_all", "submission_id")[:top]
            )
            chosen += [s.submission for s in ranked]
        if workload:
            wl = find_workload(workload)
            if wl is None:
                raise CommandError(f"no workload {workload!r}")
            chosen += list(submissions_touching(wl.wid).select_related("hardware").order_by("pk"))
        if earlier:
            qs = submissions_with_earlier_results().select_related("hardware").order_by("pk")
            chosen += list(qs.filter(hardware__slug=hardware) if hardware else qs)
        seen, unique = set(), []
        for s in chosen:
            if s.pk not in seen:
                seen.add(s.pk)
                unique.append(s)
        return unique

    def _wait(self, submission_ids, after: int, total: int, timeout: float, poll: float) -> None:
        """Follow the new rows until each candidate has its final outcome (or ``timeout``)."""
        bar = tqdm(total=total, desc="re-scoring", unit="eval")  # on stderr, as the demo's
        deadline = time.monotonic() + timeout
        while True:
            got = rescore_progress(submission_ids, after)
            bar.n = got["done"]
            bar.set_postfix_str(", ".join(f"{o} {n}" for o, n in sorted(got["outcomes"].items())), refresh=False)
            bar.refresh()
            if got["done"] >= total or time.monotonic() >= deadline:
                break
            time.sleep(poll)
        bar.close()
        left = total - got["done"]
        outcomes = ", ".join(f"{n} {o}" for o, n in sorted(got["outcomes"].items())) or "none yet"
        if left:
            self.stdout.write(
                self.style.WARNING(
                    f"{got['done']}/{total} new rows evaluated ({outcomes}); {left} still queued or running: "
                    "they fold into the boards as they finish"
                )
            )
        else:
            self.stdout.write(self.style.SUCCESS(f"all {total} new rows evaluated ({outcomes})"))
