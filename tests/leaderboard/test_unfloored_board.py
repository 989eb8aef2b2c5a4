"""A CPU board where nothing beats XLA: the floored geomean ties at 1.00x, the unfloored one
ranks (tie-break and sort) and shows on the board, exports, API and submission page; the gap
to an expert both are slower than XLA compares the raw speedups."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.cache import cache

from catalog.models import ExpertReference
from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def cpu_board(workloads, hardware, users):
    cpu = hardware["cpu"]
    w0, w1 = workloads[0], workloads[1]  # expert-set workloads
    # B is created first so the submission-id tie-break alone would rank it above A
    slow = make_submission(
        make_team("Slow", users["bob"]),
        cpu,
        {w0: [("correct_slower", 0.5)], w1: [("incorrect", None)]},
        method="slow-m",
    )
    fast = make_submission(
        make_team("Fast", users["alice"]),
        cpu,
        {w0: [("correct_slower", 0.8)], w1: [("correct_slower", 0.8)]},
        method="fast-m",
    )
    ExpertReference.objects.create(
        workload=w0, hardware=cpu, implementation="tokamax.a", median_s=5e-4, speedup=0.9, outcome="correct_slower"
    )
    for s in (slow, fast):
        rebuild_submission(s)
    cache.clear()
    return {"slow": slow, "fast": fast}


def test_floored_ties_and_unfloored_ranks(client, cpu_board):
    rows = client.get("/api/v1/leaderboard/?hardware=cpu&set=all").json()["rows"]
    assert [r["submission"] for r in rows] == [cpu_board["fast"].pk, cpu_board["slow"].pk]
    assert [r["geomean"] for r in rows] == [1.0, 1.0]
    assert rows[0]["ugeomean"] == pytest.approx(0.8) and rows[1]["ugeomean"] == pytest.approx(0.5)
    assert rows[0]["ugeomean_low"] < 0.8 < rows[0]["ugeomean_high"]  # the best sample's timing spread
    # ascending sort by the unfloored geomean puts the slower one first
    rows = client.get("/api/v1/leaderboard/?hardware=cpu&set=all&sort=ugeomean").json()["rows"]
    assert [r["submission"] for r in rows] == [cpu_board["slow"].pk, cpu_board["fast"].pk]


def test_board_and_export_show_the_unfloored_geomean(client, cpu_board):
    html = client.get("/leaderboard/?hardware=cpu&set=all").content.decode()
    assert "Unfloored geomean" in html and "sort=-ugeomean" in html
    assert "0.80x" in html and "0.50x" in html
    cache.clear()
    body = client.get("/leaderboard/?hardware=cpu&set=all&format=csv").content.decode()
    rows = [
        r for r in csv.DictReader(io.StringIO(body.split("\n\n")[-1] if "\n\n" in body else body)) if r.get("ugeomean")
    ]
    by_sub = {r["submission"]: float(r["ugeomean"]) for r in rows if r.get("section") == "ranked"}
    assert by_sub[str(cpu_board["fast"].pk)] == pytest.approx(0.8)


def test_submission_page_gap_below_100_when_slower_than_a_slow_expert(client, cpu_board):
    html = client.get(f"/submissions/{cpu_board['fast'].pk}/").content.decode()
    assert "Unfloored geomean" in html and "0.80x" in html
    # 0.8 / 0.9 = 89%, not the floored 1 / 1 = 100%
    assert "89%" in html
