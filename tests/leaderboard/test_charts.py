"""leaderboard.charts: pure functions from aggregate values to Plotly figure dicts."""

from __future__ import annotations

import json
import math

import pytest

from jaxbench.record import OUTCOMES
from leaderboard import charts


def _json_ready(fig):
    json.dumps(fig)  # plain JSON, no numpy or custom types
    assert set(fig) >= {"data", "layout"}
    # The charts build plain dicts (fast); plotly's own validation still checks every
    # property name and value here.
    import plotly.graph_objects as go

    go.Figure(fig)
    return fig


def test_plotly_validation_catches_a_misspelt_property():
    with pytest.raises(ValueError):
        _json_ready({"data": [charts._trace("bar", x=[1], colour="red")], "layout": {}})


def test_geomean_bars_with_xla_line_and_expert_mark():
    rows = [
        {"label": "#1 A", "geomean": 1.3, "low": 1.2, "high": 1.4, "tied": True},
        {"label": "#2 B", "geomean": 1.1, "low": 1.05, "high": 1.3, "tied": True},
    ]
    fig = _json_ready(charts.geomean_bars(rows, expert_geomean=2.08))
    bar = fig["data"][0]
    assert bar["type"] == "bar" and list(bar["y"]) == [1.3, 1.1] and list(bar["x"]) == ["#1 A", "#2 B"]
    assert list(bar["error_y"]["array"]) == pytest.approx([0.1, 0.2])
    assert list(bar["error_y"]["arrayminus"]) == pytest.approx([0.1, 0.05])
    ys = sorted(s["y0"] for s in fig["layout"]["shapes"])
    assert ys == [1.0, 2.08]  # XLA line and expert mark
    assert fig["data"][1]["name"] == "experts" and list(fig["data"][1]["y"]) == [2.08]
    assert "template" in fig["layout"] and len(json.dumps(fig["layout"]["template"])) < 3000
    fig = charts.geomean_bars(rows)
    assert len(fig["layout"]["shapes"]) == 1 and len(fig["data"]) == 1


def test_fast_curves():
    fig = _json_ready(
        charts.fast_curves(
            [{"label": "a", "n": [1, 2, 3], "fast": [0.0, 0.5, 0.5]}, {"label": "b", "n": [1], "fast": [1.0]}], p=1.0
        )
    )
    assert [t["name"] for t in fig["data"]] == ["a", "b"]
    assert list(fig["data"][0]["y"]) == [0.0, 0.5, 0.5] and fig["data"][0]["line"]["shape"] == "hv"
    assert fig["layout"]["yaxis"]["tickformat"] == ".0%"


def test_speedup_heatmap_uses_log2_and_blanks():
    fig = _json_ready(
        charts.speedup_heatmap(
            [{"label": "s1", "best": {"1p": 2.0, "2p": None}}, {"label": "s2", "best": {"1p": 0.5}}], ["1p", "2p"]
        )
    )
    hm = fig["data"][0]
    assert hm["type"] == "heatmap"
    assert [list(r) for r in hm["z"]] == [[1.0, None], [-1.0, None]]
    assert hm["text"][0][1] == "no correct kernel" and hm["text"][1][0] == "0.50x"
    assert hm["zmid"] == 0 and list(hm["y"]) == ["s1", "s2"]


def test_expert_gap_and_outcome_shares():
    fig = _json_ready(charts.expert_gap_bars([{"label": "a", "value": 0.77}, {"label": "b", "value": 1.2}]))
    assert list(fig["data"][0]["y"]) == [0.77, 1.2]
    assert fig["layout"]["shapes"][0]["y0"] == 1.0
    fig = _json_ready(charts.outcome_shares([{"label": "a", "counts": {"correct_faster": 1, "compile_error": 3}}]))
    assert fig["layout"]["barmode"] == "stack" and len(fig["data"]) == len(OUTCOMES) == 8
    shares = {t["name"]: t["x"][0] for t in fig["data"]}
    assert shares["correct faster"] == 0.25 and shares["compile error"] == 0.75
    assert math.isclose(sum(shares.values()), 1.0)


def test_roofline_line_and_points():
    pts = [
        {"label": "XLA", "kind": "xla", "intensity": 10.0, "flops_per_s": 1e12},
        {"label": "#1", "kind": "submission", "intensity": 10.0, "flops_per_s": 2e12},
        {"label": "expert", "kind": "expert", "intensity": 10.0, "flops_per_s": 3e12},
    ]
    fig = _json_ready(charts.roofline(pts, peak_flops=918e12, peak_bandwidth=1.64e12))
    line = fig["data"][0]
    ridge = 918e12 / 1.64e12
    assert ridge in list(line["x"])
    for x, y in zip(line["x"], line["y"]):
        assert y == pytest.approx(min(918e12, x * 1.64e12))
    assert [t["name"] for t in fig["data"][1:]] == ["XLA", "expert", "submissions"]
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"


def test_speedup_scatter_and_outcome_breakdown():
    fig = _json_ready(
        charts.speedup_scatter(
            [{"label": "a", "best": {"1p": 1.5, "2p": None}}, {"label": "b", "best": {"2p": 0.8}}], ["1p", "2p"]
        )
    )
    assert list(fig["data"][0]["x"]) == ["1p"] and list(fig["data"][1]["y"]) == [0.8]
    fig = _json_ready(charts.outcome_breakdown({"incorrect": 4, "correct_faster": 2}))
    assert dict(zip(fig["data"][0]["x"], fig["data"][0]["y"]))["incorrect"] == 4


def test_vendored_plotly_matches_installed_package():
    import pathlib

    import plotly

    vendored = pathlib.Path(__file__).resolve().parents[2] / "static" / "vendor" / "plotly.min.js"
    bundled = pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert vendored.read_bytes() == bundled.read_bytes(), "run: python manage.py vendor_plotly"
    assert b"Licensed under the MIT license" in vendored.read_bytes()[:400]
