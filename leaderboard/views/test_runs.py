"""A user's test runs (``/test-runs/``) and a test run's page (``/test-runs/<pk>/``): its progress,
each kernel's verdict, its run logs and where it would rank (docs/DESIGN.md, "Test runs").

Only its owner reaches a test run (``Submission.test_runs.owned_by``; anyone else gets a 404), and
every page labels it "test run — private, not on the board". Making, deleting and promoting one
are the submissions app's views."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from evaluator.progress import submission_progress
from jaxbench import limits
from leaderboard import test_run_preview
from leaderboard.submission_state import state_from_progress
from leaderboard.submission_state_query import held_results, states_for
from leaderboard.test_run_verdicts import verdicts
from leaderboard.views.submission_run_logs import OUTPUT_CAP, submission_run_logs
from submissions.intake.test_runs import LABEL
from submissions.models import Submission
from submissions.views.test_runs import owned_test_run


@login_required
def test_run_list(request):
    runs = list(
        Submission.test_runs.owned_by(request.user).select_related("team", "hardware").order_by("-created_at", "-id")
    )
    states = states_for(runs)
    for r in runs:
        r.state = states[r.pk]
    return render(
        request,
        "submissions/test_run_list.html",
        {
            "runs": runs,
            "label": LABEL,
            "limits": {"live": limits.TEST_RUN_MAX_LIVE, "days": limits.TEST_RUN_DAYS},
        },
    )


@login_required
def test_run_detail(request, pk):
    run = owned_test_run(request, pk)
    progress = submission_progress(run)
    state = state_from_progress(progress)
    run_logs, more_run_logs = submission_run_logs(run)
    preview = test_run_preview.for_test_run(run) if progress["finished"] else None
    return render(
        request,
        "submissions/test_run_detail.html",
        {
            "run": run,
            "label": LABEL,
            "progress": progress,
            "state": state,
            "rows": verdicts(run),
            "held": held_results([run.pk], with_speed=True).get(run.pk, []) if state.n_held else [],
            "previews": [preview] if preview else [],
            "run_logs": run_logs,
            "more_run_logs": more_run_logs,
            "run_log_cap": OUTPUT_CAP,
        },
    )
