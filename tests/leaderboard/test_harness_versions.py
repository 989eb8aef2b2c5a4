"""Comparable by default, harness too: only results measured under the current harness
(jaxbench.HARNESS_VERSION) are ranked; earlier ones are kept, listed beside the current ones on
the submission page, in the API and the exports, and a rebuild after a bump knows it."""

from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command

from evaluator.models import Evaluation, current_harness_version
from jaxbench import HARNESS_VERSION
from leaderboard.aggregates.refresh import rebuild_submission, refresh_for_evaluation
from leaderboard.models import SubmissionSummary, WorkloadResult
from tests import factories
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db


def earlier_harness(sub, workloads, version="1.0.0"):
    """``sub``'s rows of ``workloads`` measured under harness ``version`` instead."""
    for ev in Evaluation.objects.filter(candidate__submission=sub, candidate__workload__in=workloads):
        Evaluation.objects.filter(pk=ev.pk).update(
            harness_version=version, record=dict(ev.record, harness_version=version)
        )


@pytest.fixture
def mixed(workloads, hardware, users):
    """A 4-workload submission: 2 measured under the current harness, 2 under 1.0.0, and one of
    those 2 re-scored under the current harness (a row beside the 1.0.0 one)."""
    ws = workloads[:4]
    sub = make_submission(
        make_team("Alpha Lab", users["alice"]),
        hardware["cpu"],
        {w: [("correct_faster", 2.0 + i, (1.9 + i, 2.1 + i))] for i, w in enumerate(ws)},
    )
    earlier_harness(sub, ws[2:])
    old = Evaluation.objects.get(candidate__submission=sub, candidate__workload=ws[2])
    factories.rescored_row(old, 1.5, harness_version=current_harness_version())
    rebuild_submission(sub)
    return sub, ws


def test_only_the_current_harness_is_ranked(mixed):
    sub, ws = mixed
    rows = {r.workload_id: r for r in WorkloadResult.objects.filter(submission=sub)}
    assert set(rows) == {ws[0].pk, ws[1].pk, ws[2].pk}  # ws[3]: only its 1.0.0 result
    assert rows[ws[2].pk].best_speedup == pytest.approx(1.5)  # the re-score, not the earlier 4.0
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.harness_versions == [current_harness_version()]
    assert (summary.earlier_versions, summary.earlier_harness_versions) == (2, ["1.0.0"])
    assert Evaluation.objects.filter(candidate__submission=sub).count() == 5  # nothing deleted


def test_page_api_and_exports_list_the_earlier_harness_beside_the_current_one(client, mixed):
    sub, ws = mixed
    note = "2 of 4 workloads evaluated under an earlier harness (1 re-scored under the current harness)"
    html = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert note in html and 'id="earlier-versions"' in html and "Earlier workload and harness versions" in html
    assert "4.00×" in html and "1.50×" in html and "not re-scored" in html  # old and new side by side
    v = client.get(f"/api/v1/leaderboard/submissions/{sub.pk}/").json()[0]["workload_versions"]
    assert (v["earlier"], v["earlier_version"], v["earlier_harness"], v["rescored"], v["note"]) == (2, 0, 2, 1, note)
    first = v["rows"][0]
    assert (first["workload"], first["version"], first["harness_version"]) == (ws[2].wid, 1, "1.0.0")
    assert first["current_harness_version"] == current_harness_version()
    assert first["best_speedup"] == pytest.approx(4.0) and first["current"]["best_speedup"] == pytest.approx(1.5)
    exported = client.get(f"/submissions/{sub.pk}/?format=json").json()
    assert exported["meta"]["workload_versions"] == note and len(exported["earlier_versions"]) == 2
    cache.clear()
    row = next(
        r for r in client.get("/api/v1/leaderboard/?hardware=cpu").json()["in_progress"] if r["submission"] == sub.pk
    )
    assert row["earlier_versions"] == 2


def test_both_kinds_of_earlier_results_in_one_note(mixed):
    from catalog.models import Workload
    from leaderboard.versions import earlier_versions

    sub, ws = mixed
    Workload.objects.filter(pk=ws[0].pk).update(version=2)
    v = earlier_versions(sub)
    assert v["note"] == (
        "1 of 4 workloads evaluated under an earlier version, 2 under an earlier harness "
        "(1 re-scored under the current versions)"
    )


def test_rebuild_after_a_harness_bump_folds_the_current_harness_only(client, monkeypatch, workloads, hardware, users):
    sub = make_submission(
        make_team("Beta", users["bob"]),
        hardware["cpu"],
        {w: [("correct_faster", 2.0, (1.9, 2.1)), ("incorrect", None)] for w in workloads[:3]},
    )
    out = StringIO()
    call_command("rebuild_aggregates", stdout=out)
    assert "earlier" not in out.getvalue() and WorkloadResult.objects.filter(submission=sub).count() == 3
    factories.bump_harness(monkeypatch, "9.0.0")
    call_command("rebuild_aggregates", stdout=out)
    assert "6 evaluations of an earlier harness kept, not folded: the current one is 9.0.0" in out.getvalue()
    assert not WorkloadResult.objects.filter(submission=sub).exists()
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert (summary.n_samples, summary.earlier_versions, summary.earlier_harness_versions) == (0, 6, [HARNESS_VERSION])
    assert Evaluation.objects.filter(candidate__submission=sub).count() == 6  # kept
    html = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert "3 of 3 workloads evaluated under an earlier harness" in html and "2.00×" in html


def test_a_late_verdict_of_an_earlier_harness_is_noted_not_folded(workloads, hardware, users):
    sub = make_submission(
        make_team("Gamma", users["bob"]), hardware["cpu"], {workloads[0]: [("correct_faster", 2.0, (1.9, 2.1))]}
    )
    rebuild_submission(sub)
    old = Evaluation.objects.get(candidate__submission=sub)
    late = factories.rescored_row(old, 3.0, harness_version="1.0.0")
    assert refresh_for_evaluation(late) is None
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert (summary.earlier_versions, summary.earlier_harness_versions) == (1, ["1.0.0"])
    assert WorkloadResult.objects.get(submission=sub).best_speedup == pytest.approx(2.0)


@pytest.mark.django_db(transaction=True)
def test_rows_of_the_current_harness_stay_on_the_board_after_the_migration(client, workloads, hardware, users):
    """A fresh install's rows, stored before the harness column (evaluator 0006), migrated
    forward and rebuilt: every row measured under the current harness is still ranked."""
    cpu = hardware["cpu"]
    team = make_team("Delta", users["alice"])
    plan = {workloads[0]: ("correct_faster", 2.0), workloads[1]: ("incorrect", None), workloads[2]: ("rejected", None)}
    sub = make_submission(team, cpu, {w: [(o, s)] for w, (o, s) in plan.items()}, kind="kernels", evaluate=False)

    def rows(apps):
        for i, (w, (outcome, speedup)) in enumerate(plan.items()):
            # a harness record names its version; a hand-made one (the third) names none
            rec = {"harness_version": current_harness_version(), "speedup_ci": [1.9, 2.1]} if i < 2 else {}
            interval = {"speedup_lo": 1.9, "speedup_hi": 2.1} if speedup else {}
            factories.old_evaluation(apps, sub.candidates.get(workload=w), outcome, speedup, rec, **interval)

    factories.stored_before(("evaluator", "0006_evaluation_workload_version"), rows)
    assert set(Evaluation.objects.filter(candidate__submission=sub).values_list("harness_version", flat=True)) == {
        current_harness_version()
    }
    rebuild_submission(sub)
    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.complete and summary.n_samples == 3 and summary.earlier_versions == 0
    cache.clear()
    rows = client.get("/api/v1/leaderboard/?hardware=cpu").json()["rows"]
    assert [r["submission"] for r in rows] == [sub.pk] and rows[0]["solved"] == 1
