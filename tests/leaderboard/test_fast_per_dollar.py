"""fast@N per dollar on the board: the measured fast@N of a row over the cost its trace reports,
beside the row's own name; none where no cost was reported (or $0)."""

from __future__ import annotations

import pytest

from jaxbench import metrics
from leaderboard.aggregates.refresh import rebuild_submission
from submissions.models import Candidate
from tests.leaderboard.conftest import make_submission, make_team

API = "/api/v1/leaderboard/?hardware=cpu"


def test_per_dollar():
    assert metrics.per_dollar(0.5, 2.0) == 0.25
    assert metrics.per_dollar(0.5, 0.0) is None  # no ratio over $0
    assert metrics.per_dollar(None, 2.0) is None and metrics.per_dollar(0.5, None) is None


@pytest.mark.django_db
def test_the_board_shows_fast_at_n_per_dollar_of_each_row(client, workloads, hardware, users):
    ws = workloads[:4]
    team = make_team("spenders", users["alice"])
    paid = make_submission(
        team, hardware["cpu"], {w: [("correct_faster", 2.0), ("incorrect", None)] for w in ws}, method="Paid"
    )
    Candidate.objects.filter(submission=paid).update(cost_usd=0.25)  # 8 kernels: $2
    free = make_submission(team, hardware["cpu"], {w: [("correct_faster", 1.5)] for w in ws[:2]}, method="Unpriced")
    for s in (paid, free):
        rebuild_submission(s)
    rows = {r["method"]: r for r in client.get(API + "&set=all&n=2").json()["rows"]}
    assert rows["Paid"]["fast_per_dollar"] == pytest.approx(rows["Paid"]["fast"] / 2.0)
    assert rows["Paid"]["fast"] > 0
    assert rows["Unpriced"]["fast_per_dollar"] is None
    page = client.get("/leaderboard/?hardware=cpu&set=all&n=2").content.decode()
    shown = f"{rows['Paid']['fast_per_dollar'] * 100:.1f}%/$"
    assert '<th data-col="fast_per_dollar"' in page and shown in page
    # sorted by it: the priced row first, the unpriced last
    ordered = client.get(API + "&set=all&n=2&sort=-fast_per_dollar").json()["rows"]
    assert [r["method"] for r in ordered] == ["Paid", "Unpriced"]
