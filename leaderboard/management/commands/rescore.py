"""Re-evaluate chosen submissions under the current workload versions (evaluator/rescore.py)."""

from django.core.management.base import BaseCommand, CommandError

from catalog.lookup import find_workload
from evaluator.rescore import rescore_submission, submissions_touching
from leaderboard.models import SubmissionSummary
from submissions.models import Submission


class Command(BaseCommand):
    help = (
        "Schedule new evaluation rows, under each workload's current version, for the candidates of "
        "the chosen submissions that have none yet (earlier rows are kept; running it twice creates "
        "nothing new). Choose with --submission, --top N --hardware H, or --workload WID."
    )

    def add_arguments(self, parser):
        parser.add_argument("--submission", type=int, nargs="+", default=[], help="submission ids")
        parser.add_argument("--top", type=int, help="the N best-ranked public submissions of --hardware")
        parser.add_argument("--hardware", help="hardware target slug (with --top)")
        parser.add_argument(
            "--workload", help="every submission with results of an earlier version of this workload (its candidates)"
        )

    def handle(self, *args, submission=(), top=None, hardware=None, workload=None, **opts):
        if top is not None and not hardware:
            raise CommandError("--top needs --hardware")
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
            workload = wl.wid
            chosen += list(submissions_touching(workload).select_related("hardware").order_by("pk"))
        if not chosen:
            raise CommandError("nothing chosen: give --submission, --top N --hardware H, or --workload WID")
        seen, unique = set(), []
        for s in chosen:
            if s.pk not in seen:
                seen.add(s.pk)
                unique.append(s)
        totals = {"scheduled": 0, "queued": 0, "reused": 0}
        for i, s in enumerate(unique, 1):
            got = rescore_submission(s, workload_wid=workload)
            for k in totals:
                totals[k] += got[k]
            self.stdout.write(
                f"rescore {i}/{len(unique)}: submission #{s.pk}: {got['scheduled']} new rows "
                f"({got['queued']} queued, {got['reused']} reused)"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"rescored {len(unique)} submissions: {totals['scheduled']} new rows "
                f"({totals['queued']} queued, {totals['reused']} reused)"
            )
        )
