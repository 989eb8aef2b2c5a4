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


def test_geomean_bars_horizontal_with_interval_error_bars_and_reference_lines():
    rows = [
        {"label": "#1 A", "geomean": 1.3, "low": 1.2, "high": 1.4, "tied": True},
        {"label": "#2 B", "geomean": 1.1, "low": 1.05, "high": 1.3, "tied": True},
    ]
    fig = _json_ready(charts.geomean_bars(rows, expert_geomean=2.08))
    bar = fig["data"][0]
    # horizontal: one label per row on the y axis, never overlapping whatever the row count
    assert bar["type"] == "bar" and bar["orientation"] == "h"
    assert list(bar["x"]) == [1.3, 1.1] and list(bar["y"]) == ["#1 A", "#2 B"]
    assert bar["error_x"]["visible"] is True
    assert list(bar["error_x"]["array"]) == pytest.approx([0.1, 0.2])
    assert list(bar["error_x"]["arrayminus"]) == pytest.approx([0.1, 0.05])
    xs = sorted(s["x0"] for s in fig["layout"]["shapes"])
    assert xs == [1.0, 2.08]  # XLA line and experts' line
    assert "template" in fig["layout"] and len(json.dumps(fig["layout"]["template"])) < 3000
    assert charts.empty_message(fig) is None
    fig = charts.geomean_bars(rows)
    assert len(fig["layout"]["shapes"]) == 1 and len(fig["data"]) == 1


def test_reference_line_labels_sit_on_opposite_sides_of_close_lines():
    """The issue's "expeXLA1.00x": two labels printed over each other when the experts'
    geomean is close to 1. The lower line's label ends at its line, the higher one's starts."""
    fig = charts.geomean_bars([{"label": "a", "geomean": 1.0}], expert_geomean=1.01)
    notes = {a["text"]: a for a in fig["layout"]["annotations"]}
    assert notes["XLA 1.00x"]["xanchor"] == "right" and notes["XLA 1.00x"]["x"] == 1.0
    assert notes["experts 1.01x"]["xanchor"] == "left" and notes["experts 1.01x"]["x"] == 1.01
    fig = charts.geomean_bars([{"label": "a", "geomean": 1.0}], expert_geomean=0.9)
    notes = {a["text"]: a for a in fig["layout"]["annotations"]}
    assert notes["experts 0.90x"]["xanchor"] == "right" and notes["XLA 1.00x"]["xanchor"] == "left"


def test_long_labels_are_cut_on_the_axis_and_whole_in_the_hover():
    label = "#12 A team with a very long name indeed · iterative refinement with curated context"
    fig = _json_ready(charts.geomean_bars([{"label": label, "geomean": 1.2}]))
    shown = fig["data"][0]["y"][0]
    assert len(shown) <= charts.LABEL_CHARS and shown.endswith("…")
    assert fig["data"][0]["customdata"][0][0] == label
    heat = _json_ready(charts.speedup_heatmap([{"label": label, "best": {"1p": 2.0}}], ["1p"]))
    assert heat["data"][0]["y"] == [label] and heat["layout"]["yaxis"]["ticktext"] == [shown]


def test_titles_sit_in_the_top_margin_left_aligned():
    """A y-axis title is centred on the plot area; a title in the top margin, pushed by a
    margin sized for it (and its subtitle), cannot run into it."""
    fig = _json_ready(charts.fast_curves([{"label": "a", "n": [1, 2], "fast": [0.5, 1.0]}], subtitle="top 1 rows"))
    t = fig["layout"]["title"]
    assert t["yref"] == "container" and t["y"] == 1 and t["yanchor"] == "top" and t["xanchor"] == "left"
    assert t["subtitle"]["text"] == "top 1 rows" and fig["layout"]["margin"]["t"] >= 72


def test_fast_curves_integer_ticks_and_chosen_p():
    fig = _json_ready(
        charts.fast_curves(
            [{"label": "a", "n": [1, 2, 3], "fast": [0.0, 0.5, 0.5]}, {"label": "b", "n": [1], "fast": [1.0]}], p=1.5
        )
    )
    assert [t["name"] for t in fig["data"]] == ["a", "b"]
    assert list(fig["data"][0]["y"]) == [0.0, 0.5, 0.5] and fig["data"][0]["line"]["shape"] == "hv"
    x = fig["layout"]["xaxis"]
    assert x["tickmode"] == "linear" and x["tick0"] == 1 and x["dtick"] == 1 and x["tickformat"] == "d"
    assert x["range"] == [0.5, 3.5]  # no tick at a fractional N
    assert fig["layout"]["yaxis"]["tickformat"] == ".0%"
    assert fig["layout"]["yaxis"]["title"]["text"] == "fast_1.5@N" and "1.5x" in fig["layout"]["title"]["text"]
    assert charts.empty_message(fig) is None
    # long curves: whole-number steps, at most 12 ticks
    long = charts.fast_curves([{"label": "a", "n": list(range(1, 145)), "fast": [0.1] * 144}])
    step = long["layout"]["xaxis"]["dtick"]
    assert isinstance(step, int) and step >= 1 and 144 / step <= 12
    assert [charts._int_step(n) for n in (1, 12, 13, 30, 60, 144, 1000)] == [1, 1, 2, 5, 5, 20, 100]


def test_fast_curves_say_when_nothing_is_fast_and_when_there_is_nothing():
    fig = _json_ready(charts.fast_curves([{"label": "a", "n": [1, 2], "fast": [0.0, 0.0]}], p=1.0))
    assert any("No workload has a kernel faster than 1x" in a["text"] for a in fig["layout"]["annotations"])
    fig = _json_ready(charts.fast_curves([]))
    assert charts.empty_message(fig).startswith("No sample evaluated yet")
    assert fig["data"] == [] and fig["layout"]["annotations"][0]["name"] == "empty"
    assert fig["layout"]["xaxis"]["visible"] is False


def test_every_builder_has_an_empty_message():
    cases = [
        charts.geomean_bars([]),
        charts.speedup_heatmap([], ["1p"]),
        charts.speedup_heatmap([{"label": "a", "best": {"1p": None}}], ["1p"]),
        charts.expert_gap_bars([{"label": "a", "value": None}]),
        charts.outcome_shares([{"label": "a", "counts": {}}]),
        charts.roofline([], peak_flops=1e12, peak_bandwidth=1e11),
        charts.speedup_scatter([{"label": "a", "best": {}}], ["1p"]),
        charts.outcome_breakdown({}),
    ]
    for fig in cases:
        _json_ready(fig)
        msg = charts.empty_message(fig)
        assert msg and fig["layout"]["annotations"][0]["text"] == msg and fig["data"] == []


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
    assert fig["layout"]["yaxis"]["ticktext"] == ["s1", "s2"] and "%{y}" in hm["hovertemplate"]


def test_heatmap_grows_with_its_rows():
    wl = [f"{i}k" for i in range(1, 51)]
    small = charts.speedup_heatmap([{"label": f"s{i}", "best": {"1k": 1.5}} for i in range(2)], wl)
    big = charts.speedup_heatmap([{"label": f"s{i}", "best": {"1k": 1.5}} for i in range(30)], wl)
    assert small["layout"]["height"] >= 250 and big["layout"]["height"] >= 30 * 30
    assert small["layout"]["xaxis"]["tickangle"] == -90  # 50 workload labels stand upright, never overlap


def test_expert_gap_and_outcome_shares():
    fig = _json_ready(charts.expert_gap_bars([{"label": "a", "value": 0.77}, {"label": "b", "value": 1.2}]))
    assert list(fig["data"][0]["x"]) == [0.77, 1.2] and fig["data"][0]["orientation"] == "h"
    assert fig["layout"]["shapes"][0]["x0"] == 1.0
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


def test_speedup_scatter_error_bars_from_intervals():
    fig = _json_ready(
        charts.speedup_scatter(
            [{"label": "a", "best": {"1p": 1.5, "2p": 0.9}, "low": {"1p": 1.4, "2p": 0.8}, "high": {"1p": 1.7}}],
            ["1p", "2p"],
        )
    )
    err = fig["data"][0]["error_y"]
    assert err["visible"] is True
    assert list(err["array"]) == pytest.approx([0.2, 0.0]) and list(err["arrayminus"]) == pytest.approx([0.1, 0.1])


def test_speedup_scatter_and_outcome_breakdown():
    fig = _json_ready(
        charts.speedup_scatter(
            [{"label": "a", "best": {"1p": 1.5, "2p": None}}, {"label": "b", "best": {"2p": 0.8}}], ["1p", "2p"]
        )
    )
    assert list(fig["data"][0]["x"]) == ["1p"] and list(fig["data"][1]["y"]) == [0.8]
    assert fig["layout"]["scattermode"] == "group"  # equal points side by side in a workload's slot
    sizes = [t["marker"]["size"] for t in fig["data"]]
    assert len(set(sizes)) == 2  # and of different sizes
    fig = _json_ready(charts.outcome_breakdown({"incorrect": 4, "correct_faster": 2}))
    assert fig["data"][0]["orientation"] == "h"
    assert dict(zip(fig["data"][0]["y"], fig["data"][0]["x"]))["incorrect"] == 4


def test_vendored_plotly_matches_installed_package():
    import pathlib

    import plotly

    vendored = pathlib.Path(__file__).resolve().parents[2] / "static" / "vendor" / "plotly.min.js"
    bundled = pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert vendored.read_bytes() == bundled.read_bytes(), "run: python manage.py vendor_plotly"
    assert b"Licensed under the MIT license" in vendored.read_bytes()[:400]
