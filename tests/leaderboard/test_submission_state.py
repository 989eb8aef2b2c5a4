"""Every list shows each submission's real state with the reason a click away; a held result says
what was measured, that it waits for review and who reviews it; a trace's own claims never stand
where measured verdicts stand (issue: items 2 and 3).

The pure state function (``leaderboard.submission_state``) in every state, then the lists, the
submission page, the trace view and the API over submissions built by the conftest factories."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from evaluator.models import Evaluation
from jaxbench.verdict.review import HELD_OUTCOME
from leaderboard import submission_state as st
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.submission_state_query import states_for
from submissions.models import Candidate, Submission
from tests.leaderboard.conftest import make_submission, make_team
from tests.leaderboard.test_held_review import finish, speed_record

# --------------------------------------------------------------------------------------------
# The pure function
# --------------------------------------------------------------------------------------------


def test_queued_and_running_carry_their_progress():
    q = st.submission_state(4, 0, {})
    assert q.key == st.QUEUED and q.label == "queued 0/4" and not q.finished and q.badge == ""
    r = st.submission_state(4, 0, {}, running=1)
    assert r.key == st.RUNNING and r.label == "running 0/4"
    r = st.submission_state(4, 2, {"correct_faster": 1, "compile_error": 1})
    assert r.key == st.RUNNING and r.label == "running 2/4" and r.percent == 50
    assert r.reason == "1 correct so far; failed so far: 1 compile error"


@pytest.mark.parametrize("outcome", ["compile_error", "incorrect", "rejected", "runtime_error", "timeout"])
def test_every_candidate_failed_is_failed_never_done(outcome):
    first = st.FirstFailure("12p", 0, outcome, "boom\nmore")
    s = st.submission_state(1, 1, {outcome: 1}, first_failure=first)
    assert s.key == st.FAILED and s.badge == "bad" and s.label == "failed" and s.finished
    assert not s.any_correct and s.n_failed == 1
    assert s.reason == f"failed: 1 {st.outcome_label(outcome)} (first: 12p sample 0: {st.outcome_label(outcome)}: boom)"


def test_an_infrastructure_failure_without_outcome_is_a_failure():
    s = st.submission_state(2, 2, {"": 1, st.INFRASTRUCTURE: 1})
    assert s.key == st.FAILED and s.failures == {st.INFRASTRUCTURE: 2}
    assert s.reason == "failed: 2 infrastructure failure"


def test_some_correct_some_failed_is_partial_with_counts_most_first():
    s = st.submission_state(6, 6, {"correct_faster": 2, "incorrect": 1, "compile_error": 3})
    assert s.key == st.PARTIAL and s.badge == "warn"
    assert s.reason == "2 correct; failed: 3 compile error, 1 incorrect"


def test_a_held_result_makes_it_held_whatever_else():
    s = st.submission_state(2, 2, {HELD_OUTCOME: 1, "correct_faster": 1})
    assert s.key == st.HELD and s.badge == "held_for_review" and s.label == "held for review"
    assert s.reason == "1 correct; 1 held for review" and s.any_correct
    # held with failures: still held (undecided), the failures said too
    s = st.submission_state(2, 2, {HELD_OUTCOME: 1, "incorrect": 1})
    assert s.key == st.HELD and "failed: 1 incorrect" in s.reason


def test_all_correct_is_measured_and_the_only_green():
    s = st.submission_state(3, 3, {"correct_faster": 1, "correct_slower": 1, "correct_tie": 1})
    assert s.key == st.MEASURED and s.badge == "ok" and s.reason == "all 3 correct"
    others = [
        st.submission_state(1, 0, {}),
        st.submission_state(1, 1, {"incorrect": 1}),
        st.submission_state(2, 2, {"incorrect": 1, "correct_faster": 1}),
        st.submission_state(1, 1, {HELD_OUTCOME: 1}),
    ]
    assert [o.key for o in others] == [st.QUEUED, st.FAILED, st.PARTIAL, st.HELD]
    assert all(o.badge != "ok" for o in others)
    assert set(st.BADGES) == set(st.STATES)


def test_the_held_sentence_says_what_was_measured_who_reviews_and_what_next():
    text = st.held_sentence("correct, faster 3.20x [2.90, 3.50]", ["speedup above 10x: held for review"])
    assert text.startswith("measured: correct, faster 3.20x [2.90, 3.50]; held for review by the portal's staff")
    assert "because speedup above 10x: held for review" in text
    assert "it joins the board once a reviewer accepts it" in text


# --------------------------------------------------------------------------------------------
# Lists, pages and the API
# --------------------------------------------------------------------------------------------


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def subs(workloads, hardware, users):
    """alice's private submissions: one per state (compile errors, a wrong answer, a rejection,
    a mixed one, an all-correct one, a held one) and a trace with claims and no verdict yet."""
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    w1, w2 = workloads[0], workloads[1]

    def make(samples, **kw):
        kw.setdefault("kind", "kernels")
        s = make_submission(team, cpu, samples, published=False, **kw)
        rebuild_submission(s)
        return s

    out = {
        "compile": make({w1: [("compile_error", None)]}),
        "incorrect": make({w1: [("incorrect", None)]}),
        "rejected": make({w1: [("rejected", None)]}),
        "mixed": make({w1: [("correct_faster", 1.5, (1.2, 1.8))], w2: [("incorrect", None)]}),
        "measured": make({w1: [("correct_faster", 1.5, (1.2, 1.8))]}),
        "claims": make(
            {w1: [("correct_faster", 1.1), ("correct_faster", 1.1)]}, kind="trace", evaluate=False, reported=True
        ),
    }
    held = make_submission(
        team,
        cpu,
        {w1: [("correct_faster", 12.0)], w2: [("compile_error", None)]},
        kind="kernels",
        published=False,
        evaluate=False,
    )
    finish(held, w1, speed_record(12.0, 11.0, 13.0, held=True))
    c2 = Candidate.objects.get(submission=held, workload=w2)
    Evaluation.objects.create(
        candidate=c2,
        hardware=cpu,
        stage=Evaluation.MAIN,
        state=Evaluation.DONE,
        outcome="compile_error",
        message="SyntaxError: invalid syntax",
        code_sha256=c2.code_sha256,
        record={},
    )
    out["held"] = held
    out["users"] = users
    return out


def _row(html: str, pk: int) -> str:
    m = re.search(rf'<tr id="submission-{pk}">(.*?)</tr>', html, re.S)
    assert m, f"no row for submission {pk}"
    return m.group(1)


def test_states_for_counts_each_submission_in_few_queries(subs, django_assert_max_num_queries):
    all_subs = list(Submission.objects.select_related("hardware").filter(team__name="Alpha Lab"))
    # summaries, held counts, the unsettled ones' rows, first failures (two): whatever the sizes
    with django_assert_max_num_queries(6):
        states = states_for(all_subs)
    got = {name: states[subs[name].pk].key for name in ("compile", "incorrect", "rejected", "mixed", "measured")}
    assert got == {
        "compile": st.FAILED,
        "incorrect": st.FAILED,
        "rejected": st.FAILED,
        "mixed": st.PARTIAL,
        "measured": st.MEASURED,
    }
    assert states[subs["claims"].pk].key == st.QUEUED
    held = states[subs["held"].pk]
    assert held.key == st.HELD and held.failures == {"compile_error": 1}
    assert held.first_failure is not None and "SyntaxError" in held.first_failure.text()


def test_my_submissions_shows_each_state_and_the_reason_a_click_away(subs):
    html = client_for(subs["users"]["alice"]).get("/submissions/").content.decode()
    assert 'class="badge ok">done' not in html
    for name, key, badge, why in [
        ("compile", "failed", "bad", "1 compile error"),
        ("incorrect", "failed", "bad", "1 incorrect"),
        ("rejected", "failed", "bad", "1 rejected"),
        ("mixed", "partial", "warn", "1 correct; failed: 1 incorrect"),
        ("held", "held", "held_for_review", "1 held for review; failed: 1 compile error"),
    ]:
        row = _row(html, subs[name].pk)
        assert f'class="badge state {badge}" data-state="{key}"' in row, name
        details = re.search(r'<details class="state-reason">(.*?)</details>', row, re.S)
        assert details and why in details.group(1), name
        assert f'href="/submissions/{subs[name].pk}/#state"' in details.group(1)
    assert "(first: 1p sample 0: compile error: compile_error: something went wrong)" in _row(html, subs["compile"].pk)
    measured = _row(html, subs["measured"].pk)
    assert 'class="badge state ok" data-state="measured"' in measured and "<details" not in measured
    assert 'data-state="queued"' in _row(html, subs["claims"].pk)


def test_a_held_result_in_the_teams_list_says_what_was_measured_and_what_next(subs):
    row = _row(client_for(subs["users"]["alice"]).get("/submissions/").content.decode(), subs["held"].pk)
    sentence = re.search(r'<p class="held-sentence">(.*?)</p>', row, re.S).group(1)
    assert "1p sample 0: measured: correct, faster 12.00x [11.00, 13.00]" in sentence
    assert "held for review by the portal&#x27;s staff (the reviewers) because speedup above 10x" in sentence
    assert "it joins the board once a reviewer accepts it" in sentence


def test_publish_of_a_submission_with_no_correct_result_is_labelled_and_does_publish(subs):
    alice = client_for(subs["users"]["alice"])
    html = alice.get("/submissions/").content.decode()
    assert 'data-publish="no-correct"' in _row(html, subs["compile"].pk) and "Publish anyway" in _row(
        html, subs["compile"].pk
    )
    for name in ("mixed", "measured", "held"):
        assert 'data-publish="no-correct"' not in _row(html, subs[name].pk)
    page = alice.get(f"/submissions/{subs['compile'].pk}/").content.decode()
    assert 'data-publish="no-correct"' in page and "No candidate is correct" in page
    r = alice.post(f"/submissions/{subs['compile'].pk}/publish/")
    assert r.status_code in (200, 302)
    subs["compile"].refresh_from_db()
    assert subs["compile"].is_public  # what the label says: it is published anyway


@pytest.mark.parametrize(
    "name,key,why",
    [
        ("compile", "failed", "failed: 1 compile error"),
        ("rejected", "failed", "failed: 1 rejected"),
        ("mixed", "partial", "1 correct; failed: 1 incorrect"),
        ("held", "held", "1 held for review; failed: 1 compile error"),
        ("measured", "measured", "all 1 correct"),
    ],
)
def test_the_submission_page_shows_the_state_and_why(subs, name, key, why):
    html = client_for(subs["users"]["alice"]).get(f"/submissions/{subs[name].pk}/").content.decode()
    state = re.search(r'<p id="state">(.*?)</p>', html, re.S).group(1)
    assert f'data-state="{key}"' in state and why in state
    if key in ("failed", "partial"):
        assert 'href="#failures"' in state and 'id="failures"' in html


def test_the_held_page_says_who_reviews_and_shows_the_speed_only_to_the_team_while_private(subs):
    pk = subs["held"].pk
    alice = client_for(subs["users"]["alice"]).get(f"/submissions/{pk}/").content.decode()
    held = re.search(r'<section class="card" id="held-for-review">(.*?)</section>', alice, re.S).group(1)
    assert "measured: correct, faster 12.00x [11.00, 13.00]" in held and "held for review by the portal" in held
    rows = re.search(r'<tr data-workload="1p">(.*?)</tr>', alice, re.S).group(1)
    assert "held_for_review" in rows and ">pending<" not in rows  # not "pending 0/0"
    Submission.objects.filter(pk=pk).update(published_at=Submission.objects.get(pk=pk).created_at)
    public = Client().get(f"/submissions/{pk}/").content.decode()
    assert "measured: correct; held for review by the portal" in public and "12.00x" not in public


def test_claims_never_stand_where_verdicts_stand(subs):
    """A trace with claims (1.10x, correct) and no verdict: its page and trace view say
    'not measured yet' in the measured places and show the claims apart, labelled."""
    alice = client_for(subs["users"]["alice"])
    pk = subs["claims"].pk
    page = alice.get(f"/submissions/{pk}/").content.decode()
    assert 'id="sets-table"' not in page and 'id="not-measured"' in page
    claimed = re.search(r'<section class="card claimed" id="claimed">(.*?)</section>', page, re.S).group(1)
    assert "Claimed by the agent" in claimed and "not measured" in claimed and "100.0% of samples correct" in claimed
    table = re.search(r'<table id="workload-table">(.*?)</table>', page, re.S).group(1)
    assert "pending" in table and "1.10" not in table and "correct_faster" not in table
    assert "verified here" not in page and 'class="badge">not measured yet' in page

    trace = alice.get(f"/submissions/{pk}/?workload=1p").content.decode()
    assert "Best " not in trace  # no best speedup from the claims
    rows = re.findall(r'<tr id="sample-\d+".*?</tr>', trace, re.S)
    assert len(rows) == 2
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        measured, claimed = " ".join(cells[:-1]), cells[-1]
        assert "not measured yet" in measured and "1.10" not in measured and "correct_faster" not in measured
        assert "correct_faster 1.10x" in claimed
    data = alice.get(f"/submissions/{pk}/?workload=1p&format=json").json()
    sample = data["rows"][0]
    assert sample["outcome"] == "" and sample["speedup"] is None
    assert sample["claimed_outcome"] == "correct_faster" and sample["claimed_speedup"] == 1.1
    export = alice.get(f"/submissions/{pk}/?format=json").json()
    assert export["meta"]["provenance"] == "not measured yet" and export["state"]["state"] == "queued"
    assert export["claimed_by_agent"]["counts"] == {"correct_faster": 2}
    assert "not measured" in export["claimed_by_agent"]["note"]


def test_the_api_gives_each_submission_its_state_and_claims_apart(subs):
    alice = client_for(subs["users"]["alice"])
    for name, key in [
        ("compile", "failed"),
        ("rejected", "failed"),
        ("mixed", "partial"),
        ("held", "held"),
        ("measured", "measured"),
        ("claims", "queued"),
    ]:
        state = alice.get(f"/api/v1/submissions/{subs[name].pk}/status/").json()["state"]
        assert state["state"] == key, name
    state = alice.get(f"/api/v1/submissions/{subs['rejected'].pk}/status/").json()["state"]
    assert state["failed"] == {"rejected": 1} and state["reason"] == "failed: 1 rejected"

    cand = Candidate.objects.filter(submission=subs["claims"]).first()
    Evaluation.objects.create(
        candidate=cand, hardware=subs["claims"].hardware, stage=Evaluation.MAIN, state=Evaluation.QUEUED
    )
    ev = alice.get(f"/api/v1/submissions/{subs['claims'].pk}/evaluations/").json()["results"][0]
    assert ev["outcome"] == "" and ev["speedup"] is None
    assert "reported_outcome" not in ev and "reported_speedup" not in ev
    assert ev["claimed_by_agent"]["outcome"] == "correct_faster" and ev["claimed_by_agent"]["speedup"] == 1.1
    assert "not measured" in ev["claimed_by_agent"]["note"]
    measured = alice.get(f"/api/v1/submissions/{subs['measured'].pk}/evaluations/").json()["results"][0]
    assert measured["claimed_by_agent"] is None


def test_the_state_from_a_pages_progress_dict():
    p = {"total": 3, "done": 1, "outcomes": {"incorrect": 1}, "stages": {"main": {"running": 1, "done": 1}}}
    s = st.state_from_progress(p)
    assert s.key == st.RUNNING and s.label == "running 1/3" and s.failures == {"incorrect": 1}
    done = {"total": 2, "done": 2, "outcomes": {"correct_faster": 1, "timeout": 1}, "stages": None}
    assert st.state_from_progress(done).key == st.PARTIAL
