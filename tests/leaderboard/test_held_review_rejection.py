"""A rejected held result carries ``reward_hack`` wherever it is stored and shown (issue 31,
item 4; TRUST.md 6), and a result held on its interval's upper bound says why on the review
page. Through the real code paths: the worker's ``runner.finish`` stores the verdict, the staff
review page's POST (``evaluator.review.decide``) rejects it, the pages and the API read it."""

from __future__ import annotations

import types

import pytest

from evaluator.models import Evaluation
from jaxbench.verdict import configurations as cfgs
from jaxbench.verdict import review as review_rules
from leaderboard import configurations as board_configurations
from leaderboard.views.submission_rows import failed_samples
from tests.leaderboard.conftest import make_submission, make_team
from tests.leaderboard.test_held_review import client_for, finish, speed_record


def held_on_interval(speedup, lo, hi):
    """A record the speed verdict holds on its interval (``hold_reasons``' reasons as its notes)."""
    rec = speed_record(speedup, lo, hi)
    reasons = review_rules.hold_reasons(rec["outcome"], speedup, [lo, hi], rec["pallas_share"])
    rec["held_for_review"] = bool(reasons)
    rec["notes"] = reasons
    return rec


@pytest.fixture
def setup(workloads, hardware, users):
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    w1 = workloads[0]
    sub = make_submission(team, cpu, {w1: [("correct_faster", 9.5)]}, kind="kernels", evaluate=False)
    return types.SimpleNamespace(sub=sub, cpu=cpu, w1=w1, users=users)


def test_a_median_under_the_bar_with_its_upper_bound_above_is_held_and_says_why(setup):
    s = setup
    ev = finish(s.sub, s.w1, held_on_interval(9.5, 9.0, 10.3))
    assert ev.review == Evaluation.HELD and ev.outcome == "correct_faster"
    assert ev.held_reasons and "upper bound" in ev.held_reasons[0]
    listing = client_for(s.users["staff"]).get("/review/").content.decode()
    assert f'href="/review/{ev.pk}/"' in listing and "upper bound of the speedup" in listing
    assert "9.50x [9.00, 10.30]" in client_for(s.users["staff"]).get(f"/review/{ev.pk}/").content.decode()


def test_rejecting_a_multi_configuration_result_writes_reward_hack_everywhere(setup):
    s = setup
    record = cfgs.combine(
        "small",
        [("a", "small/a", held_on_interval(9.5, 9.0, 10.3)), ("b", "small/b", speed_record(1.5, 1.3, 1.7))],
    )
    ev = finish(s.sub, s.w1, record)
    assert ev.review == Evaluation.HELD
    r = client_for(s.users["staff"]).post(f"/review/{ev.pk}/", {"decision": "rejected", "note": "caches"})
    assert r.status_code == 302
    ev.refresh_from_db()
    assert (ev.review, ev.outcome, ev.speedup) == (Evaluation.REJECTED, "rejected", None)
    assert ev.record["error_category"] == "reward_hack"
    # each configuration too: none shows as faster, each says why
    rows = board_configurations.rows(ev.record["configurations"])
    assert [(c["outcome"], c["category"], c["speedup"]) for c in rows] == [("rejected", "reward_hack", None)] * 2
    # the measured verdict is kept
    original = ev.record["review"]["original"]
    assert [c["outcome"] for c in original["configurations"]] == ["correct_faster"] * 2
    failures, _ = failed_samples(s.sub)
    assert [(f["outcome"], f["category"]) for f in failures] == [("rejected", "reward_hack")]
    (api,) = client_for(s.users["alice"]).get(f"/api/v1/submissions/{s.sub.pk}/evaluations/").json()["results"]
    assert api["outcome"] == "rejected" and api["record"]["error_category"] == "reward_hack"
    assert [(c["outcome"], c["error_category"], c["speedup"]) for c in api["configurations"]] == [
        ("rejected", "reward_hack", None)
    ] * 2
