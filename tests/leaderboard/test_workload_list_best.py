"""The workload list's best result per workload is read from the summaries (one row per
submission), not from every submission's per-workload rows (issue 34 item 8), with the very
numbers the per-workload rows give: ``reference`` is the query it replaced."""

from __future__ import annotations

import random

from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.views.workloads import best_by_workload
from submissions.models import Submission
from tests.leaderboard.conftest import make_submission, make_team, random_sequence


def reference(hardware) -> dict[int, dict]:
    """Every public verified WorkloadResult of ``hardware``, ranked per workload in the database."""
    out: dict[int, dict] = {}
    for wl, sid, team, method, s, lo, hi in (
        WorkloadResult.objects.filter(
            hardware=hardware,
            source=SubmissionSummary.EVALUATED,
            summary__complete=True,
            best_speedup__isnull=False,
            submission__in=Submission.objects.public(),
        )
        .order_by("workload_id", "-best_speedup", "submission_id")
        .values_list(
            "workload_id",
            "submission_id",
            "submission__team__name",
            "submission__method",
            "best_speedup",
            "best_low",
            "best_high",
        )
    ):
        entry = out.get(wl)
        if entry is None:
            out[wl] = {"submission": sid, "team": team, "method": method, "best_speedup": s, "best_low": lo}
            out[wl].update(best_high=hi, lead=None, runner_up=None)
        elif entry["runner_up"] is None:
            entry["runner_up"], entry["lead"] = sid, entry["best_speedup"] / s if s else None
    return out


def test_the_best_per_workload_from_the_summaries_is_the_per_workload_rows(populated, workloads, hardware, users):
    cpu = hardware["cpu"]
    rng = random.Random(7)
    team = make_team("Charlie Co", users["staff"])
    for i in range(4):  # more contenders, a tie on a best speedup among them
        s = make_submission(team, cpu, {w: random_sequence(rng, 5, 0.7) for w in workloads[:12]}, method=f"m{i}")
        rebuild_submission(s)
    tie = make_submission(team, cpu, {workloads[0]: [("correct_faster", 1.5)]}, kind="kernels", method="tie")
    rebuild_submission(tie)

    with CaptureQueriesContext(connection) as ctx:
        got = best_by_workload(cpu)
    assert len(ctx.captured_queries) <= 4  # workloads, summaries, the leaders' intervals, experts
    expected = reference(cpu)
    assert {wl: {k: v for k, v in e.items() if k != "expert"} for wl, e in got.items() if "submission" in e} == expected
    assert sum(1 for e in expected.values() if e["runner_up"]) >= 5
