"""A level-2, ten-configuration workload defined in the tests (tests/level2) through the portal:
the catalog, a trace upload naming it, verdicts whose records carry the configurations (stored
by the worker's own ``finish``), the aggregates' level-2 set apart from level 1, the boards, the
pages and the API. The same path on a real worker: tests/evaluator/test_level2_integration.py."""

import json

import pytest
from django.utils import timezone

from catalog.models import Workload
from catalog.registry_sync import sync_workloads
from evaluator import pipeline, runner
from evaluator.models import Evaluation
from jaxbench.traces import FORMAT
from jaxbench.verdict import configurations as cfgs
from leaderboard.models import SubmissionSummary, WorkloadResult
from submissions.models import ApiToken, Submission
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    calls = []
    fake = lambda ids, queue: calls.append((list(ids), queue))
    monkeypatch.setattr(pipeline, "enqueue_many", fake)
    monkeypatch.setattr(runner, "enqueue_many", fake)
    return calls


@pytest.fixture
def catalog(level2):
    factories.hardware()
    factories.workload("12p")
    return factories.workload("51d")


def _case_record(name, outcome="correct_faster", speedup=1.5):
    correct = outcome.startswith("correct")
    return {
        "outcome": outcome,
        "error_category": None if correct else "not_allclose",
        "message": f"{name}: {outcome}",
        "speedup": speedup if correct else None,
        "speedup_ci": [speedup * 0.9, speedup * 1.1] if correct else None,
        "timing": {"median_s": 1e-3 / speedup, "n": 50} if correct else None,
        "baseline_timing": {"median_s": 1e-3, "n": 50} if correct else None,
        "held_for_review": False,
        "notes": [],
        "phases": {"total_s": 3.0},
        "profile": f"small/{name}",
        "harness_version": runner.HARNESS_VERSION,
        "jax_version": "0.10.2",
    }


def _record(wl, wrong_from=None):
    """What the harness returns for 51d: every configuration correct, or failing at ``wrong_from``."""
    cases, stop = [], False
    for i, (name, case) in enumerate(zip(wl.configuration_names("small"), wl.cases("small")), 1):
        if stop:
            cases.append((name, case, None))
            continue
        wrong = wrong_from is not None and i >= wrong_from
        cases.append((name, case, _case_record(name, "incorrect" if wrong else "correct_faster", 1.0 + i / 10)))
        stop = wrong
    return cfgs.combine("small", cases)


def _upload(client, user, lines):
    token = ApiToken.issue(user, "tests")[1]
    head = {"format": FORMAT, "method": "agent-l2", "model": "m", "hardware": "cpu", "sampling": "sequential"}
    body = "\n".join(json.dumps(x) for x in [head, *lines]) + "\n"
    return client.post(
        "/api/v1/submissions/trace/", body, content_type="application/x-ndjson", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def test_the_catalog_mirrors_level_and_configurations(catalog, level2):
    assert catalog.level == 2 and list(catalog.configurations["small"]) == list(level2.configuration_names("small"))
    assert catalog.cases("full")[:2] == ["full/c01", "full/c02"]
    assert set(catalog.shapes) == set(level2.cases("small")) | set(level2.cases("full"))
    assert catalog.shapes["small/c05"]["inputs"][0]["shape"] == [8, 256]
    assert Workload.objects.get(wid="12p").level == 1
    assert sync_workloads()[0] >= 0  # a full sync with the extra module registered keeps it


def test_a_trace_names_the_level_two_workload_and_its_samples_fold_into_level_2(client, catalog, level2, sent):
    user, _ = factories.member()
    code = "def workload(x, gate, scale):\n    return x\n"
    r = _upload(
        client,
        user,
        [
            {"workload": "51d", "index": 0, "code": code + "# 0"},
            {"workload": "51d-gated-rmsnorm", "index": 1, "code": code + "# 1"},
            {"workload": "12p", "index": 0, "code": "def workload(x, scale):\n    return x\n"},
        ],
    )
    assert r.status_code == 201, r.content
    sub = Submission.objects.get(pk=r.json()["id"])
    rows = {
        (e.candidate.workload.wid, e.candidate.index): e
        for e in Evaluation.objects.filter(candidate__submission=sub).select_related("candidate__workload")
    }
    assert set(rows) == {("51d", 0), ("51d", 1), ("12p", 0)}
    # the worker's own finish stores the harness's records: 51d #0 wrong from c03, #1 correct everywhere
    runner.finish(runner.claim(rows["51d", 0].pk, "w"), _record(level2, wrong_from=3), Evaluation.DONE)
    runner.finish(runner.claim(rows["51d", 1].pk, "w"), _record(level2), Evaluation.DONE)
    runner.finish(runner.claim(rows["12p", 0].pk, "w"), {"outcome": "incorrect", "message": "off"}, Evaluation.DONE)
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.sets["level2"]["size"] == 1 and summary.sets["level2"]["solved"] == 1
    assert summary.sets["all"]["solved"] == 0  # level 1 is untouched by level 2's result
    want = _record(level2)["speedup"]
    assert summary.geomean_level2 == pytest.approx(want) and summary.geomean_all == 1.0
    result = WorkloadResult.objects.get(summary=summary, workload=catalog)
    assert result.best_index == 1 and result.best_speedup == pytest.approx(want)

    # the level-2 board ranks it with its geomean; the default board offers the level-2 tab
    Submission.objects.filter(pk=sub.pk).update(published_at=timezone.now())
    board = client.get("/leaderboard/?hardware=cpu&set=level2").content.decode()
    assert "agent-l2" in board and "Level 2" in board
    assert "set=level2" in client.get("/leaderboard/?hardware=cpu").content.decode()

    # the submission page: per configuration, the best sample's ten
    page = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert 'id="configurations-51d"' in page and page.count('data-configuration="c') == 10
    # the JSON export: the best sample's configurations per multi-configuration workload
    export = client.get(f"/submissions/{sub.pk}/?format=json").json()
    assert list(export["configurations"]) == ["51d"] and len(export["configurations"]["51d"]) == 10
    # the sample view: the chosen (failed) sample's configurations, not run after the failure
    samples = client.get(f"/submissions/{sub.pk}/?workload=51d&sample=0").content.decode()
    assert samples.count("not_run") >= 7 and 'data-configuration="c03"' in samples

    # the API: each evaluation's configurations
    token = ApiToken.issue(user, "api")[1]
    got = client.get(f"/api/v1/submissions/{sub.pk}/evaluations/", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    items = got["results"] if isinstance(got, dict) else got
    by_index = {(e["workload"], e["index"]): e for e in items}
    assert by_index["12p", 0]["configurations"] is None
    conf = by_index["51d", 1]["configurations"]
    assert [c["name"] for c in conf] == list(level2.configuration_names("small"))
    assert all(c["outcome"] == "correct_faster" and c["speedup_ci"] for c in conf)
    assert [c["outcome"] for c in by_index["51d", 0]["configurations"]][2:4] == ["incorrect", "not_run"]


def test_the_workload_page_lists_its_configurations_and_the_list_its_level(client, catalog):
    page = client.get("/workloads/51d-gated-rmsnorm/").content.decode()
    assert "10 configurations" in page and page.count('data-configuration="c') == 10
    assert "tokens=8 hidden=256" in page and "x 8×256" in page
    level1 = client.get("/workloads/").content.decode()
    assert 'data-workload="51d"' not in level1 and "set=level2" in level1
    level2_page = client.get("/workloads/?set=level2").content.decode()
    assert 'data-workload="51d"' in level2_page and "10 configurations" in level2_page
    starter = client.get("/workloads/51d-gated-rmsnorm/starter.py")
    if starter.status_code == 200:
        assert b"10 configurations" in starter.content


def test_an_unknown_later_level_id_is_refused_with_the_rule(client, catalog):
    user, _ = factories.member()
    r = _upload(client, user, [{"workload": "52d", "index": 0, "code": "def workload(x):\n    return x\n"}])
    assert r.status_code == 400 and "52d" in r.content.decode()


def test_no_level_two_tab_before_a_level_two_workload_exists(client):
    factories.hardware()
    factories.workload("12p")
    assert "set=level2" not in client.get("/workloads/").content.decode()
    assert "set=level2" not in client.get("/leaderboard/?hardware=cpu").content.decode()
    # asked for anyway: an empty level-2 board, said so, not an error
    assert client.get("/leaderboard/?hardware=cpu&set=level2").status_code == 200
