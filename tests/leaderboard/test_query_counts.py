"""Query counts of the pages the leaderboard benchmark visits, with a cold cache: bounded, and
independent of how many submissions, samples and workloads there are (no query per row), so
that a page's cost at full size (1.44 M evaluations) cannot creep up unnoticed (issue 13)."""

from __future__ import annotations

import random

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.conftest import make_submission, make_team, random_sequence

pytestmark = pytest.mark.django_db

# The most queries each page may run with an empty cache (anonymous visitor). Raise a bound
# only with a reason: every query here runs on every cold request.
MAX_QUERIES = {
    "leaderboard": 10,
    # ?versions=all: + the stored current states of the summaries with earlier results and their
    # other evaluations (leaderboard.board_versions); an earlier harness alone: + the evaluations
    "leaderboard_all_versions": 12,
    "leaderboard_earlier_harness": 11,
    "submission": 13,  # + the failed samples with their messages, + the run logs, + the stored highlighting (one query each)
    "workload": 9,
    "compare": 4,
    "api": 8,
}


def _pages(populated, workloads) -> dict[str, str]:
    a, b = populated["a"].pk, populated["b"].pk
    return {
        "leaderboard": "/leaderboard/?hardware=cpu",
        "submission": f"/submissions/{a}/",
        "workload": f"/workloads/{workloads[0].slug}/",
        "compare": f"/compare/?s={a}&s={b}",
        "api": "/api/v1/leaderboard/?hardware=cpu&n=20",
    }


def _count(client, url) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as ctx:
        r = client.get(url)
    assert r.status_code == 200, (url, r.status_code)
    return len(ctx.captured_queries)


def _more_submissions(populated, workloads, users, k: int):
    rng = random.Random(7)
    team = make_team("Charlie Co", users["alice"])
    for i in range(k):
        s = make_submission(
            team,
            populated["cpu"],
            {w: random_sequence(rng, 5, 0.6) for w in workloads[:30]},
            method=f"method-{i}",
            model_name=f"model-{i}",
            tokens=50,
        )
        rebuild_submission(s)


def test_cold_pages_stay_within_their_query_budget(client, populated, workloads):
    for name, url in _pages(populated, workloads).items():
        n = _count(client, url)
        assert n <= MAX_QUERIES[name], f"{name} ({url}): {n} queries, budget {MAX_QUERIES[name]}"


def test_query_counts_do_not_grow_with_the_data(client, populated, workloads, users):
    pages = _pages(populated, workloads)
    before = {name: _count(client, url) for name, url in pages.items()}
    _more_submissions(populated, workloads, users, 4)
    after = {name: _count(client, url) for name, url in pages.items()}
    assert after == before


def _earlier_harness(sub, workloads):
    """``sub``'s rows of ``workloads`` measured under harness 1.0.0 instead (then rebuilt)."""
    from evaluator.models import Evaluation

    for ev in Evaluation.objects.filter(candidate__submission=sub, candidate__workload__in=workloads):
        Evaluation.objects.filter(pk=ev.pk).update(
            harness_version="1.0.0", record=dict(ev.record, harness_version="1.0.0")
        )
    rebuild_submission(sub)


def test_the_version_filter_has_a_bounded_query_count(client, populated, workloads, users):
    pages = {
        "leaderboard": "/leaderboard/?hardware=cpu",
        "leaderboard_all_versions": "/leaderboard/?hardware=cpu&versions=all",
        "leaderboard_earlier_harness": "/leaderboard/?hardware=cpu&versions=harness-1.0.0",
    }
    _earlier_harness(populated["a"], workloads[:5])
    before = {name: _count(client, url) for name, url in pages.items()}
    for name, n in before.items():
        assert n <= MAX_QUERIES[name], f"{name}: {n} queries, budget {MAX_QUERIES[name]}"
    # the API and the exports run the same queries as the page's data
    assert _count(client, "/api/v1/leaderboard/?hardware=cpu&versions=all") <= MAX_QUERIES["api"] + 2
    # more submissions, each with results of an earlier harness: no query more
    _more_submissions(populated, workloads, users, 3)
    from submissions.models import Submission

    for sub in Submission.objects.filter(method__startswith="method-"):
        _earlier_harness(sub, workloads[:2])
    after = {name: _count(client, url) for name, url in pages.items()}
    assert after == before


def test_an_unfinished_submission_reads_its_workloads_not_every_candidate(workloads, hardware, users):
    """Issue 34, item 8: the page of a submission still being evaluated (or holding a verdict for
    review) lists its pending workloads from its candidates' workloads, DISTINCT without the
    candidates' ordering (with it, DISTINCT ran over every candidate: 7,202 rows of a private
    trace, 80 ms on SQLite): at most one row per workload comes back."""
    from django.db.models import Count

    from leaderboard.models import SubmissionSummary
    from leaderboard.views.submission_rows import workload_rows
    from submissions.models import Candidate

    team = make_team("pending team", users["alice"])
    rng = random.Random(3)
    sub = make_submission(team, hardware["cpu"], {w: random_sequence(rng, 6) for w in workloads[:4]})
    rebuild_submission(sub)
    # two more workloads' candidates wait for their verdicts
    make_more = make_submission(
        team, hardware["cpu"], {w: random_sequence(rng, 5) for w in workloads[4:6]}, evaluate=False
    )
    Candidate.objects.filter(submission=make_more).update(submission=sub)
    summary = SubmissionSummary.objects.get(submission=sub, source="evaluated")
    SubmissionSummary.objects.filter(pk=summary.pk).update(complete=False)
    summary.refresh_from_db()
    with CaptureQueriesContext(connection) as ctx:
        rows = workload_rows(sub, summary)
    assert [r["wid"] for r in rows] == [w.wid for w in workloads[:6]]
    assert [r["outcome"] for r in rows[4:]] == ["pending", "pending"]
    distinct = [
        q["sql"] for q in ctx.captured_queries if "DISTINCT" in q["sql"] and "submissions_candidate" in q["sql"]
    ]
    assert distinct and not any("ORDER BY" in sql for sql in distinct), distinct
    per_workload = Candidate.objects.filter(submission=sub).values("workload_id").annotate(n=Count("id")).order_by()
    assert all(r["n"] > 1 for r in per_workload)  # several candidates per workload, one row each
