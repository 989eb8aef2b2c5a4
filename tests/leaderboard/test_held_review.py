"""Held means held (issue 21, item 5; TRUST.md 6): a result the harness holds for review is not
ranked, not counted in fast@N and not shown as faster until a staff member accepts it on the
review page; a rejected one becomes ``rejected`` (``reward_hack``) and counts as that.

Verdicts are stored through the worker's own ``runner.finish`` (which sets the review state from
the record and folds the aggregates), the boards are read through ``leaderboard_data``, the
API through the test client and the CLI's summary from that API's own answers."""

from __future__ import annotations

import json
import re
import types

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from evaluator import runner
from evaluator.models import Evaluation
from evaluator.progress import submission_progress
from jaxbench import HARNESS_VERSION
from jaxbench.client import commands
from jaxbench.record import format_speedup, new_record
from jaxbench.verdict import review as review_rules
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.data import Query, leaderboard_data
from leaderboard.models import SubmissionSummary
from leaderboard.views.submission_rows import failed_samples, progress_for, summaries_of
from submissions.models import Candidate, Submission
from tests import factories
from tests.leaderboard.conftest import make_submission, make_team

HELD_TEXT = format_speedup(12.0, 11.0, 13.0)  # "12.00x [11.00, 13.00]": must appear nowhere public


def speed_record(speedup, lo, hi, *, held=False):
    rec = new_record(
        outcome="correct_faster",
        phase="verdict",
        workload="1p",
        profile="small",
        hardware="cpu",
        platform="cpu",
        speedup=speedup,
        speedup_ci=[lo, hi],
        timing={"median_s": 1e-3 / speedup, "samples": [1e-3 / speedup] * 3, "method": "cpu_thunk_span", "n": 3},
        baseline_timing={"median_s": 1e-3, "samples": [1e-3] * 3},
        baseline_median_s=1e-3,
        cached_baseline_median_s=0.9e-3,
        baseline_source="interleaved",
        held_for_review=held,
        message=f"correct; {format_speedup(speedup, lo, hi)}, faster",
        jax_version="0.10.2",
        harness_version=HARNESS_VERSION,
    )
    if held:
        rec["notes"] = ["speedup above 10x: held for review"]
    return rec


def finish(sub, workload, record) -> Evaluation:
    """A running main-stage row of ``sub``'s candidate for ``workload``, finished by the worker's
    own code path (runner.finish: verdict, review state, aggregates in one transaction)."""
    cand = Candidate.objects.get(submission=sub, workload=workload)
    ev = Evaluation.objects.create(
        candidate=cand,
        hardware=sub.hardware,
        stage=Evaluation.MAIN,
        state=Evaluation.RUNNING,
        code_sha256=cand.code_sha256,
    )
    runner.finish(ev, record, Evaluation.DONE)
    ev.refresh_from_db()
    return ev


@pytest.fixture
def held_setup(workloads, hardware, users):
    """alice's public submission: workload 1p held at 12x, workload 2p correct and faster 1.5x."""
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    w1, w2 = workloads[0], workloads[1]
    sub = make_submission(
        team,
        cpu,
        {w1: [("correct_faster", 12.0)], w2: [("correct_faster", 1.5)]},
        kind="kernels",
        evaluate=False,
    )
    held = finish(sub, w1, speed_record(12.0, 11.0, 13.0, held=True))
    finish(sub, w2, speed_record(1.5, 1.3, 1.7))
    return types.SimpleNamespace(sub=sub, cpu=cpu, held=held, w1=w1, w2=w2, users=users)


def board(cpu):
    data = leaderboard_data(Query(hardware=cpu), use_cache=False)
    return data


def rows_of(data, sub):
    ranked = [r for r in data["rows"] if r["submission"] == sub.pk]
    partial = [r for r in data["in_progress"] if r["submission"] == sub.pk]
    return ranked, partial


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


# --------------------------------------------------------------------------------------------
# The rule
# --------------------------------------------------------------------------------------------


def test_the_rule_is_a_pure_function_of_the_review_state():
    assert review_rules.state_from_record({"held_for_review": True}, "correct_faster") == "held"
    assert review_rules.state_from_record({"held_for_review": True}, "incorrect") == ""  # a failure counts as is
    assert review_rules.state_from_record({"held_for_review": False}, "correct_faster") == ""
    reused = {"held_for_review": True, "review": {"state": "rejected"}}
    assert review_rules.state_from_record(reused, "rejected") == "rejected"
    assert [review_rules.counts_for_ranking(s) for s in review_rules.STATES] == [True, False, True, True]
    pub = review_rules.public_record(speed_record(12.0, 11.0, 13.0, held=True), "held")
    assert pub["speedup"] is None and pub["speedup_ci"] is None and pub["outcome"] == "held_for_review"
    assert HELD_TEXT not in json.dumps(pub)


# --------------------------------------------------------------------------------------------
# Held: not ranked, not in fast@N, not shown as faster
# --------------------------------------------------------------------------------------------


def test_a_held_12x_row_is_not_ranked_nor_in_fast_at_n(held_setup):
    s = held_setup
    assert s.held.review == Evaluation.HELD and s.held.outcome == "correct_faster"  # measured verdict kept
    summary = SubmissionSummary.objects.get(submission=s.sub, source=SubmissionSummary.EVALUATED)
    assert summary.counts["correct_faster"] == 1 and summary.n_samples == 1  # only the 1.5x row
    assert not summary.complete and summary.best.get(s.w1.wid) is None
    assert round(summary.fast_all * 50) == 1
    ranked, partial = rows_of(board(s.cpu), s.sub)
    assert ranked == [] and len(partial) == 1  # not ranked: the submission waits, partial
    assert round(partial[0]["fast"] * 50) == 1  # fast@N counts the 1.5x row only
    # the full rebuild (manage.py rebuild_aggregates) applies the same rule
    rebuild_submission(s.sub)
    summary.refresh_from_db()
    assert summary.counts["correct_faster"] == 1 and not summary.complete and round(summary.fast_all * 50) == 1


def test_the_submitter_sees_held_for_review_on_page_api_and_cli(held_setup, capsys):
    s = held_setup
    alice = client_for(s.users["alice"])
    page = alice.get(f"/submissions/{s.sub.pk}/")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="held-for-review"' in html and "held for review" in html
    assert HELD_TEXT not in html and "review it" not in html  # no staff link for the submitter
    trace = alice.get(f"/submissions/{s.sub.pk}/?workload={s.w1.wid}").content.decode()
    assert "held_for_review" in trace and "12.00x" not in trace

    evs = alice.get(f"/api/v1/submissions/{s.sub.pk}/evaluations/").json()["results"]
    held = next(e for e in evs if e["workload"] == s.w1.wid)
    assert held["outcome"] == "held_for_review" and held["held_for_review"] is True and held["review"] == "held"
    assert held["speedup"] is None and held["record"]["speedup"] is None and "12.00x" not in json.dumps(held)
    other = next(e for e in evs if e["workload"] == s.w2.wid)
    assert other["outcome"] == "correct_faster" and other["held_for_review"] is False and other["speedup"] == 1.5
    only_held = alice.get(f"/api/v1/submissions/{s.sub.pk}/evaluations/?outcome=held_for_review").json()
    assert [e["workload"] for e in only_held["results"]] == [s.w1.wid]
    faster = alice.get(f"/api/v1/submissions/{s.sub.pk}/evaluations/?outcome=correct_faster").json()
    assert [e["workload"] for e in faster["results"]] == [s.w2.wid]
    assert alice.get(f"/api/v1/submissions/{s.sub.pk}/").json()["held_for_review"] == 1
    st = alice.get(f"/api/v1/submissions/{s.sub.pk}/status/").json()
    assert st["held"] == 1 and st["outcomes"] == {"held_for_review": 1, "correct_faster": 1}

    portal = types.SimpleNamespace(get_all=lambda path, page_size=None: evs)
    assert commands.print_summary(types.SimpleNamespace(json=False), portal, s.sub.pk, st) == commands.EXIT_OK
    out = capsys.readouterr().out
    assert f"{s.w1.wid} #0 held for review" in out and "1 held for review" in out and "12.00x" not in out
    assert "1 faster than XLA" in out
    assert commands.print_summary(types.SimpleNamespace(json=True), portal, s.sub.pk, st) == commands.EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["held"] == [
        {"workload": s.w1.wid, "index": 0, "outcome": "held_for_review", "message": held["message"]}
    ]
    assert data["status"]["held"] == 1


def test_the_submission_list_does_not_count_a_held_row_as_faster(held_setup):
    from evaluator.progress import progress_annotations

    s = held_setup
    row = progress_annotations(Submission.objects.filter(pk=s.sub.pk)).get()
    assert (row.n_done, row.n_faster) == (2, 1)


# --------------------------------------------------------------------------------------------
# The review page: staff only
# --------------------------------------------------------------------------------------------


def test_non_staff_cannot_reach_the_review_page_or_post(held_setup):
    s = held_setup
    alice = client_for(s.users["alice"])  # the submitter herself
    assert alice.get("/review/").status_code == 403
    assert alice.get(f"/review/{s.held.pk}/").status_code == 403
    assert alice.post(f"/review/{s.held.pk}/", {"decision": "accepted"}).status_code == 403
    anon = Client().post(f"/review/{s.held.pk}/", {"decision": "accepted"})
    assert anon.status_code == 302 and "/accounts/login/" in anon["Location"]
    s.held.refresh_from_db()
    assert s.held.review == Evaluation.HELD and s.held.reviewed_by is None


def test_a_post_without_csrf_changes_nothing(held_setup):
    s = held_setup
    c = Client(enforce_csrf_checks=True)
    c.force_login(s.users["staff"])
    assert c.post(f"/review/{s.held.pk}/", {"decision": "accepted"}).status_code == 403
    s.held.refresh_from_db()
    assert s.held.review == Evaluation.HELD


def test_the_review_page_shows_record_source_timings_and_reason(held_setup):
    s = held_setup
    staff = client_for(s.users["staff"])
    listing = staff.get("/review/").content.decode()
    assert f'href="/review/{s.held.pk}/"' in listing and "speedup above 10x: held for review" in listing
    detail = staff.get(f"/review/{s.held.pk}/").content.decode()
    for text in (
        "speedup above 10x: held for review",  # why
        "correct_faster",  # the measured outcome
        "0.08333 ms",  # the candidate's median
        "1 ms",  # the baseline side by side
        "0.9 ms",  # the baseline alone (the guard's cached figure)
        HELD_TEXT,  # staff see the measured speedup
        "sample 0",
        'name="csrfmiddlewaretoken"',
        'value="accepted"',
        'value="rejected"',
    ):
        assert text in detail, text
    source = re.sub(r"<[^>]+>", "", detail.split('id="review-source"')[1])
    assert "def workload(x):" in source and "return x * 0" in source  # the candidate's source
    page = staff.get(f"/submissions/{s.sub.pk}/").content.decode()
    assert f'href="/review/{s.held.pk}/"' in page  # linked from the submission page for staff
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", password="pw-root-123")
    admin = client_for(root).get("/admin/evaluator/evaluation/?review__exact=held")
    assert admin.status_code == 200  # linked from the admin, filtered to the held rows
    assert f'href="/review/{s.held.pk}/">held: review it' in admin.content.decode()


# --------------------------------------------------------------------------------------------
# Accept / reject
# --------------------------------------------------------------------------------------------


def test_after_accept_the_row_is_ranked_and_in_fast_at_n(held_setup):
    s = held_setup
    staff = client_for(s.users["staff"])
    r = staff.post(f"/review/{s.held.pk}/", {"decision": "accepted", "note": "checked the kernel: real"})
    assert r.status_code == 302
    s.held.refresh_from_db()
    assert s.held.review == Evaluation.ACCEPTED and s.held.reviewed_by == s.users["staff"]
    assert s.held.reviewed_at is not None and s.held.review_note == "checked the kernel: real"
    assert s.held.record["review"]["by"] == "staff" and s.held.record["review"]["state"] == "accepted"
    assert s.held.outcome == "correct_faster" and s.held.speedup == 12.0
    summary = SubmissionSummary.objects.get(submission=s.sub, source=SubmissionSummary.EVALUATED)
    assert summary.complete and summary.counts["correct_faster"] == 2 and summary.best[s.w1.wid] == 12.0
    ranked, partial = rows_of(board(s.cpu), s.sub)
    assert partial == [] and len(ranked) == 1 and round(ranked[0]["fast"] * 50) == 2
    evs = client_for(s.users["alice"]).get(f"/api/v1/submissions/{s.sub.pk}/evaluations/").json()["results"]
    held = next(e for e in evs if e["workload"] == s.w1.wid)
    assert held["outcome"] == "correct_faster" and held["speedup"] == 12.0 and held["review"] == "accepted"
    # a second decision on the same row is refused: it is not held any more
    again = staff.post(f"/review/{s.held.pk}/", {"decision": "rejected"})
    assert again.status_code == 302
    s.held.refresh_from_db()
    assert s.held.review == Evaluation.ACCEPTED
    rebuild_submission(s.sub)  # the full rebuild agrees
    summary.refresh_from_db()
    assert summary.complete and summary.counts["correct_faster"] == 2


def test_after_reject_it_is_rejected_reward_hack_and_filtered_everywhere(held_setup):
    s = held_setup
    staff = client_for(s.users["staff"])
    r = staff.post(f"/review/{s.held.pk}/", {"decision": "rejected", "note": "caches the output"})
    assert r.status_code == 302
    s.held.refresh_from_db()
    assert (s.held.review, s.held.outcome, s.held.speedup) == (Evaluation.REJECTED, "rejected", None)
    rec = s.held.record
    assert rec["outcome"] == "rejected" and rec["error_category"] == "reward_hack"
    # never lose data: the measured verdict and timings are kept in the row
    assert rec["review"]["original"]["outcome"] == "correct_faster" and rec["review"]["original"]["speedup"] == 12.0
    assert rec["timing"]["median_s"] == pytest.approx(1e-3 / 12) and rec["review"]["note"] == "caches the output"
    summary = SubmissionSummary.objects.get(submission=s.sub, source=SubmissionSummary.EVALUATED)
    assert summary.complete and summary.counts["rejected"] == 1 and summary.counts["correct_faster"] == 1
    assert summary.best.get(s.w1.wid) is None and round(summary.fast_all * 50) == 1
    ranked, _ = rows_of(board(s.cpu), s.sub)
    assert len(ranked) == 1 and round(ranked[0]["fast"] * 50) == 1 and ranked[0]["correctness"] == 0.5
    failures, _ = failed_samples(s.sub)
    assert [(f["wid"], f["outcome"], f["category"]) for f in failures] == [(s.w1.wid, "rejected", "reward_hack")]
    evs = client_for(s.users["alice"]).get(f"/api/v1/submissions/{s.sub.pk}/evaluations/").json()["results"]
    held = next(e for e in evs if e["workload"] == s.w1.wid)
    assert held["outcome"] == "rejected" and held["speedup"] is None and held["review"] == "rejected"
    assert held["record"]["error_category"] == "reward_hack" and "by" not in held["record"]["review"]  # staff's name
    rebuild_submission(s.sub)
    summary.refresh_from_db()
    assert summary.counts["rejected"] == 1 and round(summary.fast_all * 50) == 1


def test_a_verdict_reused_for_identical_code_keeps_its_review(held_setup):
    """A rejected verdict reused for the same code (runner.reusable_record) stays rejected."""
    s = held_setup
    staff = client_for(s.users["staff"])
    staff.post(f"/review/{s.held.pk}/", {"decision": "rejected"})
    s.held.refresh_from_db()
    team = make_team("Copy Cats", s.users["bob"])
    copy = make_submission(team, s.cpu, {s.w1: [("correct_faster", 12.0)]}, kind="kernels", evaluate=False)
    ev = finish(copy, s.w1, dict(s.held.record, reused=True))
    assert (ev.review, ev.outcome) == (Evaluation.REJECTED, "rejected")


def test_a_decision_covers_the_held_rows_that_reused_the_verdict(held_setup):
    """Identical code measured once, reused by another submission while held: one review decides
    both (the same measurement), and both boards refresh."""
    s = held_setup
    team = make_team("Copy Cats", s.users["bob"])
    copy = make_submission(team, s.cpu, {s.w1: [("correct_faster", 12.0)]}, kind="kernels", evaluate=False)
    cand = Candidate.objects.get(submission=copy)
    ev = Evaluation.objects.create(
        candidate=cand, hardware=s.cpu, stage=Evaluation.MAIN, state=Evaluation.RUNNING, code_sha256=cand.code_sha256
    )
    runner.finish(ev, dict(s.held.record, reused=True), Evaluation.DONE, reused_from=s.held)
    ev.refresh_from_db()
    assert ev.review == Evaluation.HELD
    assert not SubmissionSummary.objects.filter(submission=copy, source=SubmissionSummary.EVALUATED).exists()
    page = client_for(s.users["bob"]).get(f"/submissions/{copy.pk}/")  # nothing folded yet: the page still says why
    assert page.status_code == 200 and 'id="held-for-review"' in page.content.decode()
    client_for(s.users["staff"]).post(f"/review/{s.held.pk}/", {"decision": "accepted"})
    ev.refresh_from_db()
    assert ev.review == Evaluation.ACCEPTED and ev.reviewed_by == s.users["staff"]
    copy_summary = SubmissionSummary.objects.get(submission=copy, source=SubmissionSummary.EVALUATED)
    assert copy_summary.complete and copy_summary.best[s.w1.wid] == 12.0


# --------------------------------------------------------------------------------------------
# The migration's back-fill
# --------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_migration_back_fills_held_rows_from_their_records(workloads, hardware, users):
    """Rows stored before the review existed (migration 0003), migrated forward: a correct held
    verdict starts held, a held failure and an ordinary verdict hold nothing; then
    rebuild_aggregates takes the held row off the board."""
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    ws = workloads
    plan = {
        ws[0]: ("correct_faster", 12.0, True),
        ws[1]: ("correct_faster", 1.5, False),
        ws[2]: ("incorrect", None, True),
    }
    sub = make_submission(team, cpu, {w: [(o, sp)] for w, (o, sp, _) in plan.items()}, kind="kernels", evaluate=False)

    def rows(apps):
        for w, (outcome, speedup, held) in plan.items():
            rec = (
                speed_record(speedup, speedup * 0.9, speedup * 1.1, held=held) if speedup else {"held_for_review": held}
            )
            factories.old_evaluation(apps, Candidate.objects.get(submission=sub, workload=w), outcome, speedup, rec)

    factories.stored_before(("evaluator", "0003_evaluation_failures"), rows)
    got = dict(Evaluation.objects.filter(candidate__submission=sub).values_list("candidate__workload_id", "review"))
    assert got == {ws[0].pk: "held", ws[1].pk: "", ws[2].pk: ""}
    rebuild_submission(sub)  # manage.py rebuild_aggregates, once after the migration
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.counts["correct_faster"] == 1 and summary.counts["incorrect"] == 1 and not summary.complete


def test_a_finished_submission_with_a_held_verdict_reads_its_progress_from_its_summary(held_setup):
    """Issue 34, item 8: every candidate folded into the summary or held, the progress comes
    from the summary and the held rows' count (their index), as a complete summary's does,
    without counting the evaluation rows (80 ms of the private page of a 7,200-sample
    submission with two held verdicts); the same figures as counting them."""
    sub = held_setup.sub
    summary, _ = summaries_of(sub)
    assert not summary.complete and summary.n_samples == 1
    with CaptureQueriesContext(connection) as ctx:
        got = progress_for(sub, summary)
    assert not any(
        'FROM "evaluator_evaluation"' in q["sql"] and "GROUP BY" in q["sql"] and '"stage"' in q["sql"]
        for q in ctx.captured_queries
    )
    counted = submission_progress(sub)
    assert got == dict(counted, stages=None)
    assert got["finished"] and got["held"] == 1 and got["outcomes"]["held_for_review"] == 1
    # a candidate still to evaluate: counted from the rows again
    Candidate.objects.create(submission=sub, workload=held_setup.w2, index=1, code="x", code_sha256="1" * 64)
    SubmissionSummary.objects.filter(pk=summary.pk).update(candidates_total=3)
    summary.refresh_from_db()
    assert progress_for(sub, summary) == submission_progress(sub)
