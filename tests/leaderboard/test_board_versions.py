"""The boards' version filter (?versions= on the leaderboard page, its charts, exports and API):
by default the current versions only, so an earlier version's better result is left out;
``all`` shows it, flagged and marked not comparable; ``harness-X`` an earlier harness alone.
Computed from the evaluation rows, never written into the aggregates."""

import csv
import io
import math

import pytest
from django.core.cache import cache

from evaluator.models import Evaluation, current_harness_version
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import SubmissionSummary, WorkloadResult
from tests import factories
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db

API = "/api/v1/leaderboard/?hardware=cpu"


def _gm(*speedups, size=50):
    return math.exp(sum(math.log(max(1.0, s)) for s in speedups) / size)


@pytest.fixture
def board(workloads, hardware, users):
    """A: three workloads under the current harness (2x each). B: 1p measured at 8x under harness
    1.0.0 and re-scored at 1.5x under the current one, 2p at 1.2x. C: everything under 1.0.0 (3x)."""
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    w = workloads
    a = make_submission(team, cpu, {x: [("correct_faster", 2.0, (1.9, 2.1))] for x in w[:3]}, method="a-method")
    b = make_submission(
        team,
        cpu,
        {w[0]: [("correct_faster", 8.0, (7.5, 8.5))], w[1]: [("correct_faster", 1.2, (1.1, 1.3))]},
        method="b-method",
    )
    old = Evaluation.objects.get(candidate__submission=b, candidate__workload=w[0])
    Evaluation.objects.filter(pk=old.pk).update(
        harness_version="1.0.0", record=dict(old.record, harness_version="1.0.0")
    )
    factories.rescored_row(old, 1.5, harness_version=current_harness_version())
    c = make_submission(
        team, cpu, {x: [("correct_faster", 3.0, (2.9, 3.1))] for x in w[:3]}, method="c-method", harness="1.0.0"
    )
    for s in (a, b, c):
        rebuild_submission(s)
    cache.clear()
    return {"a": a, "b": b, "c": c, "w": w}


def _rows(client, url):
    cache.clear()
    data = client.get(url).json()
    return data, {r["submission"]: r for r in data["rows"]}, {r["submission"]: r for r in data["in_progress"]}


def test_the_default_counts_the_current_versions_only(client, board):
    data, rows, partial = _rows(client, API)
    b = rows[board["b"].pk]
    assert b["geomean"] == pytest.approx(_gm(1.5, 1.2))  # not the earlier harness's 8x
    assert b["versions_used"] == {} and b["version_note"] == ""
    assert board["c"].pk not in rows and partial[board["c"].pk]["n_samples"] == 0  # nothing current to rank
    meta = data["meta"]
    assert meta["versions"] == "current" and meta["comparable"] and meta["rows_from_earlier_versions"] == 0
    assert [v for v, _ in meta["version_options"]] == ["current", "all", "harness-1.0.0"]


def test_all_versions_shows_the_earlier_better_result_flagged(client, board):
    before = list(SubmissionSummary.objects.order_by("pk").values_list("pk", "updated_at", "geomean_all"))
    results = WorkloadResult.objects.count()
    data, rows, _ = _rows(client, API + "&versions=all")
    wid = board["w"][0].wid
    b = rows[board["b"].pk]
    assert b["geomean"] == pytest.approx(_gm(8.0, 1.2)) and b["solved"] == 2
    assert b["versions_used"] == {
        wid: {
            "workload_version": 1,
            "harness_version": "1.0.0",
            "current_workload_version": 1,
            "current_harness_version": current_harness_version(),
        }
    }
    assert b["version_note"] == f"1 workload from an earlier version: {wid} (harness 1.0.0)"
    assert b["harness_version"] == f"1.0.0, {current_harness_version()}"
    c = rows[board["c"].pk]  # ranked now: every candidate has its result under some version
    assert c["geomean"] == pytest.approx(_gm(3.0, 3.0, 3.0)) and len(c["versions_used"]) == 3
    a = rows[board["a"].pk]  # nothing earlier: as stored
    assert a["geomean"] == pytest.approx(_gm(2.0, 2.0, 2.0)) and a["versions_used"] == {}
    assert [r["submission"] for r in data["rows"]] == [board["c"].pk, board["b"].pk, board["a"].pk]
    meta = data["meta"]
    assert meta["versions"] == "all" and not meta["comparable"] and meta["rows_from_earlier_versions"] == 2
    # computed on the fly: nothing written
    assert list(SubmissionSummary.objects.order_by("pk").values_list("pk", "updated_at", "geomean_all")) == before
    assert WorkloadResult.objects.count() == results


def test_an_earlier_harness_alone(client, board):
    data, rows, partial = _rows(client, API + "&versions=harness-1.0.0")
    assert set(rows) == {board["c"].pk} and set(partial) == {board["b"].pk}  # B: 1p only of its two
    assert partial[board["b"].pk]["geomean"] == pytest.approx(_gm(8.0))
    assert data["meta"]["versions_label"] == "Harness 1.0.0 (earlier, not comparable)"
    # the current harness named explicitly, or nonsense: the default
    for value in (f"harness-{current_harness_version()}", "harness-", "bogus", "harness-a b"):
        assert _rows(client, API + f"&versions={value}")[0]["meta"]["versions"] == "current", value


def test_budget_and_fast_p_under_all_versions(client, board):
    _, rows, _ = _rows(client, API + "&versions=all&n=1&p=4")
    b = rows[board["b"].pk]
    assert b["geomean"] == pytest.approx(_gm(8.0, 1.2)) and b["fast"] == pytest.approx(1 / 50)  # 8x > 4x


def test_the_page_has_the_control_a_banner_and_flags(client, board):
    cache.clear()
    html = client.get("/leaderboard/?hardware=cpu").content.decode()
    assert '<select name="versions" id="id_versions">' in html
    assert '<option value="all">All versions (not comparable)</option>' in html
    assert '<option value="harness-1.0.0">Harness 1.0.0 (earlier, not comparable)</option>' in html
    assert 'id="versions-banner"' not in html and "from earlier versions" not in html
    cache.clear()
    html = client.get("/leaderboard/?hardware=cpu&versions=all").content.decode()
    assert '<option value="all" selected>' in html and 'id="versions-banner"' in html
    assert "Not comparable." in html and "2 ranked rows take a result from an earlier version" in html
    assert "from earlier versions</span>" in html and "(harness 1.0.0)" in html  # row badge; heatmap hover
    assert 'href="?hardware=cpu&amp;set=all&amp;n=all&amp;sort=-geomean"' in html  # back to the current versions
    assert "All versions (not comparable)" in html  # the charts say which versions they show


def test_exports_carry_the_choice_and_the_flags(client, board):
    cache.clear()
    text = client.get("/leaderboard/?hardware=cpu&versions=all&format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    b = next(r for r in rows if r["section"] == "ranked" and r["submission"] == str(board["b"].pk))
    assert b["version_note"].startswith("1 workload from an earlier version") and b["comparable"] == "False"
    assert b["versions"] == "all"
    body = client.get("/leaderboard/?hardware=cpu&versions=all&format=json").json()
    assert body["meta"]["comparable"] is False and "version_options" not in body["meta"]
    ranked = {r["submission"]: r for r in body["rows"]}
    assert ranked[board["b"].pk]["versions_used"][board["w"][0].wid]["harness_version"] == "1.0.0"
    default = client.get("/leaderboard/?hardware=cpu&format=json").json()
    assert default["meta"]["comparable"] is True
    assert {r["submission"]: r for r in default["rows"]}[board["b"].pk]["geomean"] == pytest.approx(_gm(1.5, 1.2))


def test_each_summary_is_recomputed_once_until_it_changes(board):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from leaderboard.data import Query, leaderboard_data

    q = Query.from_params({"hardware": "cpu", "versions": "all"})

    def evaluation_queries():
        with CaptureQueriesContext(connection) as ctx:
            data = leaderboard_data(q, use_cache=False)
        return sum('"evaluator_evaluation"' in c["sql"] for c in ctx.captured_queries), data

    cache.clear()
    assert evaluation_queries()[0] == 1  # B and C folded from their rows
    n, data = evaluation_queries()
    assert n == 0 and {r["submission"]: r for r in data["rows"]}[board["b"].pk]["geomean"] == pytest.approx(
        _gm(8.0, 1.2)
    )
    # a new earlier-harness verdict of B: only B is folded again, and it counts
    old = Evaluation.objects.get(candidate__submission=board["b"], candidate__workload=board["w"][1])
    late = factories.rescored_row(old, 9.0, harness_version="1.0.0")
    from leaderboard.aggregates.refresh import refresh_for_evaluation

    assert refresh_for_evaluation(late) is None
    n, data = evaluation_queries()
    assert n == 1 and {r["submission"]: r for r in data["rows"]}[board["b"].pk]["geomean"] == pytest.approx(
        _gm(8.0, 9.0)
    )
