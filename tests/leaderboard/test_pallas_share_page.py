"""The share of FLOPs outside Pallas is shown on the submission page (best sample per workload)
and in its trace view (every sample), from the evaluation record, whatever the rule."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from evaluator.models import Evaluation
from jaxbench.verdict import pallas_share
from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db


def _share(outside, total=1000):
    claim = {
        "outside_flops": outside,
        "inside_flops": total,
        "outside": {"dot_general": outside},
        "top_outside": [{"primitive": "dot_general", "flops": outside, "where": "candidate.py:31"}],
    }
    return pallas_share.assess(claim, total, require_pallas=False)


def test_share_on_the_submission_page_and_trace_view(client, workloads, hardware, users):
    team = make_team("Share Lab", users["alice"])
    w = workloads[0]
    sub = make_submission(
        team,
        hardware["cpu"],
        {w: [("correct_slower", 0.5, (0.4, 0.6)), ("correct_faster", 2.0, (1.8, 2.2)), ("rejected", None)]},
    )
    for idx, outside in ((0, 5), (1, 30), (2, 870)):
        ev = Evaluation.objects.get(candidate__submission=sub, candidate__index=idx)
        ev.record = dict(ev.record, pallas_share=_share(outside))
        ev.save(update_fields=["record"])
    rebuild_submission(sub)
    cache.clear()

    r = client.get(f"/submissions/{sub.pk}/")
    assert r.status_code == 200
    html = r.content.decode()
    row = next(x for x in r.context["rows"] if x["wid"] == w.wid)
    assert row["best_index"] == 1
    assert row["outside_pallas"] == "3.0%"  # the best sample's share
    assert row["outside_pallas_where"] == "dot_general at candidate.py:31"
    assert ">Outside Pallas</th>" in html and ">3.0%</td>" in html
    assert "share of FLOPs outside Pallas: 3.0%" in html

    r = client.get(f"/submissions/{sub.pk}/?workload={w.wid}&sample=2")
    html = r.content.decode()
    shares = [x["outside_pallas"] for x in r.context["samples"]]
    assert shares == ["0.5%", "3.0%", "87%"]
    assert r.context["chosen_share"] == "87%"
    assert 'title="largest outside: dot_general at candidate.py:31"' in html


def test_records_without_a_share_show_nothing(client, workloads, hardware, users):
    team = make_team("Old Lab", users["alice"])
    w = workloads[0]
    sub = make_submission(team, hardware["cpu"], {w: [("correct_faster", 2.0, (1.8, 2.2))]})
    rebuild_submission(sub)
    r = client.get(f"/submissions/{sub.pk}/")
    assert r.status_code == 200
    assert next(x for x in r.context["rows"] if x["wid"] == w.wid)["outside_pallas"] == ""
    r = client.get(f"/submissions/{sub.pk}/?workload={w.wid}")
    assert [x["outside_pallas"] for x in r.context["samples"]] == [""]
    assert not r.context["chosen_share"]


def test_docs_state_the_rule_threshold_and_allowances(client, settings):
    settings.JAXBENCH_REQUIRE_PALLAS = True
    docs = client.get("/docs/").content.decode()
    assert 'id="pallas-rule"' in docs
    assert f"{round(100 * pallas_share.THRESHOLD)}% of the workload's FLOPs" in docs
    assert "work_outside_pallas" in docs and "on this deployment: yes" in docs
    for wid, (share, _reason) in pallas_share.OUTSIDE_ALLOWANCE.items():
        assert f"<td>{wid}</td><td class=\"num\">{round(100 * share)}%</td>" in docs
    settings.JAXBENCH_REQUIRE_PALLAS = False
    assert "on this deployment: no" in client.get("/docs/").content.decode()
