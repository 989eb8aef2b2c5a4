"""Issue 34, item 1: every leaderboard chart names each submission's own numbers.

The ranked rows are sorted by rank in place; the charts once paired them with the summary ids
in database order, so on a board whose rank order differs from the order the submissions were
created in, the heatmap, outcome-shares and fast@N charts printed one submission's results under
another's name (the tables were right). Here three submissions are created A, B, C and rank
C, A, B; each chart's label must carry that submission's own values."""

from __future__ import annotations

import json
import math
import re

import pytest

from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db


def _figure(html: str, fig_id: str) -> dict:
    m = re.search(rf'<script id="{fig_id}" type="application/json">(.*?)</script>', html, re.S)
    assert m, fig_id
    return json.loads(m.group(1))


@pytest.fixture
def board(workloads, hardware):
    """Created A, B, C (database order); ranked C, A, B. Every submission has its own best
    speedups, outcome counts and fast@N curve. ``w0``, ``w1``: the two workloads used."""
    cpu = hardware["cpu"]
    w0, w1 = workloads[0], workloads[1]
    spec = {
        # A: 2x on w0, a compile error on w1 -> one solved, fast@1 = 1/50
        "A": {w0: [("correct_faster", 2.0)], w1: [("compile_error", None)]},
        # B: a runtime error then 1.5x on w0, a timeout on w1 -> fast@1 = 0, fast@2 = 1/50
        "B": {w0: [("runtime_error", None), ("correct_faster", 1.5)], w1: [("timeout", None)]},
        # C: 4x on w0 and 3x on w1 -> first; fast@1 = 2/50
        "C": {w0: [("correct_faster", 4.0)], w1: [("correct_faster", 3.0)]},
    }
    subs = {}
    for name, samples in spec.items():
        subs[name] = make_submission(make_team(f"Team {name}"), cpu, samples, method=f"method-{name}")
        rebuild_submission(subs[name])
    assert subs["A"].pk < subs["B"].pk < subs["C"].pk
    expected = {
        "A": {"best": {w0.wid: 2.0, w1.wid: None}, "counts": {"correct_faster": 1, "compile_error": 1}},
        "B": {"best": {w0.wid: 1.5, w1.wid: None}, "counts": {"runtime_error": 1, "correct_faster": 1, "timeout": 1}},
        "C": {"best": {w0.wid: 4.0, w1.wid: 3.0}, "counts": {"correct_faster": 2}},
    }
    # fast@N, N = 1, 2 (the longest sequence: B's two samples on w0; shorter curves stay flat)
    fast = {"A": [1 / 50, 1 / 50], "B": [0.0, 1 / 50], "C": [2 / 50, 2 / 50]}
    for name in expected:
        expected[name]["fast"] = fast[name]
    return {"subs": subs, "expected": expected, "workloads": (w0, w1)}


def _name_of(label: str, subs) -> str:
    """The submission a chart label names (labels read ``#<pk> <team> · <method>``)."""
    for name, sub in subs.items():
        if label.startswith(f"#{sub.pk} "):
            assert f"Team {name}" in label and f"method-{name}" in label, label
            return name
    raise AssertionError(f"no submission named by {label!r}")


@pytest.mark.parametrize("p", [None, "1.4"], ids=["stored-curves", "p-from-aggregates"])
def test_every_chart_pairs_each_label_with_its_own_submissions_numbers(client, board, p):
    subs, expected = board["subs"], board["expected"]
    w0, w1 = board["workloads"]
    url = "/leaderboard/?hardware=cpu" + (f"&p={p}" if p else "")
    r = client.get(url)
    assert r.status_code == 200
    html = r.content.decode()
    # the board ranks C, A, B: not the database order
    ranked = [row["submission"] for row in r.context["rows"]]
    assert ranked == [subs["C"].pk, subs["A"].pk, subs["B"].pk]
    rank_order = ["C", "A", "B"]
    wrong = []  # every mislabelled chart, reported together

    # floored geomean bars: label and bar from the same row
    bar = _figure(html, "fig-geomean")["data"][0]
    rows = {row["submission"]: row for row in r.context["rows"]}
    names = [_name_of(c[0], subs) for c in bar["customdata"]]
    assert names == rank_order
    for name, x in zip(names, bar["x"]):
        assert x == pytest.approx(rows[subs[name].pk]["geomean"]), name

    # heatmap: the row labelled X holds X's best speedup per workload
    heat = _figure(html, "fig-heatmap")["data"][0]
    assert heat["x"][:2] == [w0.wid, w1.wid]
    names = [_name_of(label, subs) for label in heat["y"]]
    assert names == rank_order
    for name, zrow in zip(names, heat["z"]):
        got = {w0.wid: zrow[0], w1.wid: zrow[1]}
        want = {
            wid: None if s is None else pytest.approx(math.log2(s), abs=1e-3)
            for wid, s in expected[name]["best"].items()
        }
        if got != want:
            wrong.append(f"heatmap row labelled {name} shows {got}, {name}'s own values are {want}")
        assert all(v is None for v in zrow[2:]), name

    # outcome shares: the bar labelled X stacks X's outcome counts
    traces = {t["name"]: t for t in _figure(html, "fig-outcomes")["data"]}
    names = [_name_of(label, subs) for label in traces["correct faster"]["customdata"]]
    assert names == rank_order
    for i, name in enumerate(names):
        counts = expected[name]["counts"]
        total = sum(counts.values())
        got = {o: t["x"][i] for o, t in traces.items() if t["x"][i]}
        want = {o.replace("_", " "): pytest.approx(n / total) for o, n in counts.items()}
        if got != want:
            wrong.append(f"outcome bar labelled {name} shows {got}, {name}'s own shares are {want}")

    # fast@N: the curve named X is X's curve (every speedup here is >= 1.5x: the same at p = 1.4)
    curves = _figure(html, "fig-fast")["data"]
    names = [_name_of(c["hovertemplate"].split("<br>")[0], subs) for c in curves]
    assert names == rank_order
    for name, c in zip(names, curves):
        assert c["name"].startswith(f"#{subs[name].pk} ")
        assert c["x"] == [1, 2]
        if c["y"] != pytest.approx(expected[name]["fast"]):
            wrong.append(f"fast@N curve named {name} is {c['y']}, {name}'s own curve is {expected[name]['fast']}")
    assert not wrong, "\n".join(wrong)
