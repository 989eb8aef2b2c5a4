"""The public suite's own score beside ours: the geometric mean over the ATTEMPTED workloads of
each one's speedup floored at 1 (metrics.upstream_score), kept per set as the summaries'
attempted counts, on the board (column, API) and in a submission's aggregates; a full-budget
figure only."""

from __future__ import annotations

import math

import pytest

from jaxbench import metrics
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import SubmissionSummary
from tests.leaderboard.conftest import make_submission, make_team

API = "/api/v1/leaderboard/?hardware=cpu&set=all"


@pytest.mark.parametrize(
    "speedups,size",
    [([2.0, None, 0.5], 10), ([3.0, 1.5], 2), ([None, 0.8], 5), ([4.0], 50)],
)
def test_it_is_the_floored_geomean_over_the_attempted_workloads(speedups, size):
    ours = metrics.floored_geomean_of(speedups + [None] * (size - len(speedups)))
    got = metrics.upstream_score(ours, size, len(speedups))
    assert got == pytest.approx(metrics.floored_geomean_of(speedups))
    assert got >= ours - 1e-12  # never below ours; equal when every workload was attempted
    if len(speedups) == size:
        assert got == pytest.approx(ours)


def test_nothing_attempted_and_bad_input():
    assert metrics.upstream_score(1.0, 50, 0) is None
    assert metrics.upstream_score(1.0, 0, 0) is None
    with pytest.raises(ValueError):
        metrics.upstream_score(0.9, 10, 3)  # a floored geomean is never below 1
    # a count kept from before a workload left the set: read as the whole set until a rebuild
    assert metrics.upstream_score(1.2, 3, 4) == pytest.approx(1.2)


@pytest.mark.django_db
def test_board_and_api_show_it_beside_ours(client, workloads, hardware, users):
    w = workloads[:4]
    team = make_team("Upstream Lab", users["alice"])
    sub = make_submission(
        team,
        hardware["cpu"],
        {
            w[0]: [("incorrect", None), ("correct_faster", 2.0, (1.9, 2.1))],
            w[1]: [("compile_error", None)],
            w[2]: [("correct_slower", 0.5, (0.45, 0.55))],
        },  # w[3]: not attempted
        method="Three of four",
    )
    rebuild_submission(sub)
    s = SubmissionSummary.objects.get(submission=sub, source="evaluated")
    size = len([x for x in workloads if x.level == 1])
    assert s.attempted_all == 3
    assert s.sets["all"]["attempted"] == 3
    want = metrics.floored_geomean_of([2.0, None, 0.5])  # over the three attempted: 2^(1/3)
    assert s.sets["all"]["upstream"] == pytest.approx(want)

    row = next(r for r in client.get(API).json()["rows"] if r["submission"] == sub.pk)
    assert row["attempted"] == 3
    assert row["geomean"] == pytest.approx(2.0 ** (1 / size))  # ours: over every workload of the set
    assert row["upstream"] == pytest.approx(want) and row["upstream"] > row["geomean"]
    ref = {r["kind"]: r for r in client.get(API).json()["references"]}
    assert ref["xla"]["upstream"] == 1.0
    # below the full budget the suite's score is not defined: no value, and the cell says why
    row1 = next(r for r in client.get(API + "&n=1").json()["rows"] if r["submission"] == sub.pk)
    assert row1["upstream"] is None
    page = client.get("/leaderboard/?hardware=cpu&set=all").content.decode()
    assert '<th data-col="upstream"' in page
    assert f'<span title="over the 3 attempted workloads">{want:.2f}x</span>' in page
    page1 = client.get("/leaderboard/?hardware=cpu&set=all&n=1").content.decode()
    assert 'title="defined at the full budget"' in page1
    agg = client.get(f"/api/v1/leaderboard/submissions/{sub.pk}/").json()[0]["sets"]["all"]
    assert agg["attempted"] == 3 and agg["upstream"] == pytest.approx(want)
    # sorted by it: defined rows first
    other = make_submission(
        team, hardware["cpu"], {x: [("correct_faster", 1.2, (1.1, 1.3))] for x in w}, method="All four"
    )
    rebuild_submission(other)
    rows = client.get(API + "&sort=-upstream").json()["rows"]
    assert [r["method"] for r in rows][:2] == ["Three of four", "All four"]
    assert rows[1]["upstream"] == pytest.approx(1.2) and math.isclose(rows[1]["attempted"], 4)


@pytest.mark.django_db(transaction=True)
def test_migration_counts_the_attempted_workloads_of_summaries_stored_before(workloads, hardware, users):
    from tests import factories

    team = make_team("Old Lab", users["alice"])
    sub = make_submission(team, hardware["cpu"], {}, evaluate=False)
    expert = next(x for x in workloads if x.expert)
    plain = next(x for x in workloads if not x.expert and x.level == 1)
    made = {}

    def rows(apps):
        made["pk"] = (
            apps.get_model("leaderboard", "SubmissionSummary")
            .objects.create(
                submission_id=sub.pk, hardware_id=hardware["cpu"].pk, best={expert.wid: 1.5, plain.wid: None}
            )
            .pk
        )

    factories.stored_before(("leaderboard", "0005_curves_one_record_per_budget"), rows)
    s = SubmissionSummary.objects.get(pk=made["pk"])
    assert (s.attempted_all, s.attempted_expert, s.attempted_level2) == (2, 1, 0)
