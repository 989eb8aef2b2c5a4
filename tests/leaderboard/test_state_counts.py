"""The lists read a settled submission's state and counts from its summary, never from its
evaluation rows, with the very numbers the rows give (issue 34 item 8: counting a page of
7,200-sample submissions' rows cost a tenth of a second per submission on SQLite).

``counts_for`` with ``_settled`` emptied is the count from the rows alone, as before."""

from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluator import runner
from evaluator.models import Evaluation
from leaderboard import submission_state_query as q
from leaderboard.aggregates.refresh import rebuild_submission
from submissions.models import Candidate, Submission
from tests.leaderboard.conftest import make_submission, make_team
from tests.leaderboard.test_held_review import finish, speed_record
from tests.leaderboard.test_submission_state import client_for, subs  # noqa: F401 - the fixture

SETTLED = ("compile", "incorrect", "rejected", "mixed", "measured")


def settled_and_held(team, cpu, w1, w2):
    """Every candidate has its verdict: one held for review (never folded), one compile error
    folded by the worker's own code path."""
    sub = make_submission(
        team, cpu, {w1: [("correct_faster", 12.0)], w2: [("compile_error", None)]}, kind="kernels", evaluate=False
    )
    finish(sub, w1, speed_record(12.0, 11.0, 13.0, held=True))
    c2 = Candidate.objects.get(submission=sub, workload=w2)
    ev = Evaluation.objects.create(
        candidate=c2, hardware=cpu, stage=Evaluation.MAIN, state=Evaluation.RUNNING, code_sha256=c2.code_sha256
    )
    runner.finish(
        ev, {"outcome": "compile_error", "message": "SyntaxError", "harness_version": ev.harness_version}, "done"
    )
    return sub


def from_rows(monkeypatch, submissions):
    with monkeypatch.context() as m:
        m.setattr(q, "_settled", lambda *args: {})
        return q.counts_for(submissions)


def test_settled_submissions_read_from_their_summary_count_as_their_rows(subs, workloads, hardware, monkeypatch):  # noqa: F811
    team = Submission.objects.get(pk=subs["measured"].pk).team
    subs["settled_held"] = settled_and_held(team, hardware["cpu"], workloads[0], workloads[1])
    all_subs = list(Submission.objects.select_related("hardware").filter(team=team))
    summaries = q._summaries([s.pk for s in all_subs])
    totals = q.candidate_counts([s.pk for s in all_subs], summaries)
    settled = q._settled(all_subs, summaries, totals, q.held_counts([s.pk for s in all_subs]))
    # read from the summary: every finished one whose verdicts are all folded or held; not the
    # trace without verdicts, nor the held one whose compile error was never folded
    assert set(settled) == {subs[name].pk for name in (*SETTLED, "settled_held")}
    assert q.counts_for(all_subs) == from_rows(monkeypatch, all_subs)
    held = q.counts_for(all_subs)[subs["settled_held"].pk]
    assert held.state.key == "held" and held.state.n_held == 1 and held.state.failures == {"compile_error": 1}
    assert q.counts_for(all_subs)[subs["measured"].pk].faster == 1


def test_a_submission_with_a_result_of_an_earlier_harness_is_counted_from_its_rows(subs, monkeypatch):  # noqa: F811
    sub = Submission.objects.select_related("hardware").get(pk=subs["measured"].pk)
    Evaluation.objects.filter(candidate__submission=sub).update(harness_version="0.0.1")
    rebuild_submission(sub)  # its summary now says so (earlier_versions)
    assert not q._settled([sub], q._summaries([sub.pk]), q.candidate_counts([sub.pk]), {})
    assert q.counts_for([sub]) == from_rows(monkeypatch, [sub])


def test_my_submissions_reads_no_evaluation_row_of_a_settled_submission(subs, users, workloads, hardware):  # noqa: F811
    """The list's statements stay the same however many settled submissions it shows, and none
    counts their evaluations (only the held rows' index and the first failures are read)."""
    team = make_team("Settled Lab", users["bob"])

    def listing():
        with CaptureQueriesContext(connection) as ctx:
            r = client_for(users["bob"]).get("/submissions/")
        assert r.status_code == 200
        return [x["sql"] for x in ctx.captured_queries]

    def add(n):
        for i in range(n):
            s = make_submission(team, hardware["cpu"], {workloads[i % 2]: [("correct_faster", 1.5, (1.2, 1.8))]})
            rebuild_submission(s)

    add(1)
    few = listing()
    add(4)
    many = listing()
    assert len(many) == len(few)
    grouped = [sql for sql in many if 'FROM "evaluator_evaluation"' in sql and "GROUP BY" in sql]
    assert all("\"review\" = 'held'" in sql for sql in grouped), grouped


def test_the_list_shows_the_same_numbers_as_the_rows_give(subs, monkeypatch):  # noqa: F811
    """The page from the summaries is the page from the rows, byte for byte (CSRF tokens aside)."""
    alice = client_for(subs["users"]["alice"])

    def page():
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", alice.get("/submissions/").content.decode())

    fast = page()
    with monkeypatch.context() as m:
        m.setattr(q, "_settled", lambda *args: {})
        slow = page()
    assert fast == slow and "1 correct · 1 faster" in fast
