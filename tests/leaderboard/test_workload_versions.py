"""Comparable by default: only the current workload version is ranked; a submission with
results of earlier versions says so on its page, in the API and in its exports."""

import pytest
from django.core.cache import cache

from catalog.models import Workload
from evaluator.models import Evaluation
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import SubmissionSummary, WorkloadResult
from tests import factories
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed(workloads, hardware, users):
    """A 6-workload submission; 3 of its workloads are bumped to version 2 afterwards, and one of
    those 3 is re-scored (a version-2 row beside the version-1 one)."""
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    ws = workloads[:6]
    sub = make_submission(team, cpu, {w: [("correct_faster", 2.0 + i, (1.9 + i, 2.1 + i))] for i, w in enumerate(ws)})
    rebuild_submission(sub)
    Workload.objects.filter(pk__in=[w.pk for w in ws[:3]]).update(version=2)
    old = Evaluation.objects.get(candidate__submission=sub, candidate__workload=ws[0])
    factories.rescored_row(old, 1.5, workload_version=2)
    rebuild_submission(sub)
    return sub, ws


def test_only_current_versions_are_ranked(mixed):
    sub, ws = mixed
    rows = {r.workload_id: r for r in WorkloadResult.objects.filter(submission=sub)}
    # ws[1], ws[2]: only earlier-version results, so nothing ranked; ws[0]: its re-score
    assert set(rows) == {ws[0].pk, *(w.pk for w in ws[3:])}
    assert rows[ws[0].pk].workload_version == 2 and rows[ws[0].pk].best_speedup == pytest.approx(1.5)
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.n_samples == 4 and not summary.complete
    assert Evaluation.objects.filter(candidate__submission=sub).count() == 7  # nothing deleted


def test_page_api_and_exports_say_so(client, mixed):
    sub, ws = mixed
    cache.clear()
    html = client.get(f"/submissions/{sub.pk}/").content.decode()
    note = "3 of 6 workloads evaluated under an earlier version (1 re-scored under the current one)"
    assert note in html and 'id="earlier-versions"' in html
    assert "not re-scored" in html and "1.50×" in html and "2.00×" in html
    data = client.get(f"/api/v1/leaderboard/submissions/{sub.pk}/").json()
    v = data[0]["workload_versions"]
    assert (v["earlier"], v["workloads"], v["rescored"], v["note"]) == (3, 6, 1, note)
    first = v["rows"][0]
    assert (first["workload"], first["version"], first["current_version"]) == (ws[0].wid, 1, 2)
    assert first["best_speedup"] == pytest.approx(2.0) and first["current"]["best_speedup"] == pytest.approx(1.5)
    assert v["rows"][1]["current"] is None
    exported = client.get(f"/submissions/{sub.pk}/?format=json").json()
    assert exported["meta"]["workload_versions"] == note and len(exported["earlier_versions"]) == 3
    assert note in client.get(f"/submissions/{sub.pk}/?format=csv").content.decode()


def test_a_submission_of_current_versions_says_nothing(client, workloads, hardware, users):
    sub = make_submission(make_team("B", users["bob"]), hardware["cpu"], {workloads[0]: [("incorrect", None)]})
    rebuild_submission(sub)
    html = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert 'id="earlier-versions"' not in html and "earlier version" not in html
    data = client.get(f"/api/v1/leaderboard/submissions/{sub.pk}/").json()
    assert data[0]["workload_versions"]["earlier"] == 0


def test_workload_page_version_filter_shows_earlier_results(client, mixed):
    sub, ws = mixed
    w = Workload.objects.get(pk=ws[1].pk)  # bumped to 2; the submission's result is version 1
    default = client.get(f"/workloads/{w.slug}/").content.decode()
    assert "Show results of earlier versions" in default and f"#{sub.pk}</a>" not in default
    for q in ("all", "1"):
        html = client.get(f"/workloads/{w.slug}/?versions={q}").content.decode()
        assert f'<a href="/submissions/{sub.pk}/">#{sub.pk}</a>' in html and "3.00×" in html, q
        assert "not ranked, not comparable" in html
    assert "No published results under version 7" in client.get(f"/workloads/{w.slug}/?versions=7").content.decode()
    # the current version is what the page shows anyway
    assert "Show results of earlier versions" in client.get(f"/workloads/{w.slug}/?versions=2").content.decode()
    # a workload never bumped has nothing earlier
    w4 = Workload.objects.get(pk=ws[4].pk)
    assert (
        "No published results under an earlier version"
        in client.get(f"/workloads/{w4.slug}/?versions=all").content.decode()
    )


def test_the_board_marks_rows_with_earlier_version_results(client, mixed):
    sub, ws = mixed
    cache.clear()
    data = client.get("/api/v1/leaderboard/?hardware=cpu").json()
    rows = {r["submission"]: r for r in data["rows"] + data["in_progress"]}
    assert rows[sub.pk]["earlier_versions"] == 3
    cache.clear()
    html = client.get("/leaderboard/?hardware=cpu").content.decode()
    assert "3 results of an earlier workload or harness version are kept but not counted" in html
    csv_text = client.get("/leaderboard/?hardware=cpu&format=csv").content.decode()
    assert "earlier_versions" in csv_text.splitlines()[0]


def test_a_ranked_row_is_marked_too(client, workloads, hardware, users):
    """Only one workload bumped and re-scored: the submission is complete, ranked, and marked."""
    cpu = hardware["cpu"]
    sub = make_submission(make_team("C", users["bob"]), cpu, {workloads[0]: [("correct_faster", 2.0, (1.9, 2.1))]})
    Workload.objects.filter(pk=workloads[0].pk).update(version=2)
    old = Evaluation.objects.get(candidate__submission=sub)
    factories.rescored_row(old, 1.5, workload_version=2)
    rebuild_submission(sub)
    cache.clear()
    data = client.get("/api/v1/leaderboard/?hardware=cpu").json()
    row = next(r for r in data["rows"] if r["submission"] == sub.pk)
    assert row["earlier_versions"] == 1 and row["geomean"] == pytest.approx(1.5 ** (1 / 50), rel=1e-3)
    cache.clear()
    html = client.get("/leaderboard/?hardware=cpu").content.decode()
    assert "1 results of an earlier workload or harness version are kept but not counted" in html
