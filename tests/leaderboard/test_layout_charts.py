"""Issue 34, item 6: charts sized to their rows, and the plain "time ± spread" beside a verdict.

A chart's height comes from what it shows (``charts.chart_height``): a title and an x axis, then
a fixed height per bar or heatmap row, or per legend entry where the legend is the taller; never
below a minimum. A chart of 1-4 rows is short (no mostly empty plot), one of 30 rows tall (no
squeezed bars); the time beside a verdict reads "1.230 ms ± 4%" from the record's timing stats."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from jaxbench.metrics import OUTCOMES
from leaderboard import charts
from leaderboard.templatetags.leaderboard_extras import time_spread, time_spread_text


def test_chart_height_grows_with_rows_from_a_minimum():
    assert charts.chart_height(0) == charts.chart_height(1) == charts.MIN_HEIGHT_PX
    heights = [charts.chart_height(n) for n in range(1, 41)]
    assert heights == sorted(heights) and heights[-1] > heights[0]
    # past the minimum every row adds the same height: a row is as tall on a 5-row chart as on a 40-row one
    assert charts.chart_height(30) - charts.chart_height(20) == 10 * charts.ROW_PX
    assert charts.chart_height(20) == charts.CHROME_PX + 20 * charts.ROW_PX
    assert charts.chart_height(2, minimum=100, chrome=10, per_row=5) == 100
    assert charts.chart_height(-3) == charts.MIN_HEIGHT_PX


def test_chart_height_makes_room_for_a_legend_beside_the_plot():
    # 8 legend entries beside a 1-row plot: the legend, not the row, sets the height
    assert charts.chart_height(1, legend=8) == charts.CHROME_PX + 8 * charts.LEGEND_ROW_PX + 10
    # 30 rows beside a legend of 8: the rows are the taller
    assert charts.chart_height(30, legend=8) == charts.chart_height(30)


def _rows(n):
    return [
        {"label": f"#{i} team · method {i}", "geomean": 1 + i / 10, "low": 1.0, "high": 1.2 + i / 10} for i in range(n)
    ]


@pytest.mark.parametrize(
    "build",
    [
        lambda n: charts.geomean_bars(_rows(n)),
        lambda n: charts.expert_gap_bars([{"label": f"s{i}", "value": 0.5 + i / 50} for i in range(n)]),
        lambda n: charts.outcome_shares(
            [{"label": f"s{i}", "counts": {"correct_faster": 2, "incorrect": 1}} for i in range(n)]
        ),
        lambda n: charts.speedup_heatmap(
            [{"label": f"s{i}", "best": {"1p": 1.5, "2p": 0.7}} for i in range(n)], ["1p", "2p"]
        ),
    ],
    ids=["geomean", "expert-gap", "outcome-shares", "heatmap"],
)
def test_row_charts_are_sized_to_their_rows(build):
    heights = {n: build(n)["layout"]["height"] for n in (1, 2, 4, 20, 30)}
    assert heights[2] < heights[20] < heights[30]
    assert heights[1] <= heights[2] <= heights[4]
    assert heights[4] < 340  # a chart of a few rows is short, not a mostly empty 400 px box
    assert heights[30] >= 30 * charts.ROW_PX  # every row gets its height
    for n in (1, 30):
        go.Figure(build(n))  # a valid Plotly figure


def test_row_labels_get_their_margin_and_the_highest_reference_label_its_room():
    fig = charts.geomean_bars(_rows(2), expert_geomean=1.12)
    assert fig["layout"]["yaxis"]["automargin"] is True
    # "experts 1.12x" starts at its line near the plot's right edge: the right margin holds it
    assert fig["layout"]["margin"]["r"] >= 7 * len("experts 1.12x")
    assert charts.geomean_bars(_rows(2))["layout"]["margin"]["r"] == 20  # the XLA line alone: its label ends at it


def test_the_outcome_legend_names_only_outcomes_that_occur():
    fig = charts.outcome_shares([{"label": "a", "counts": {"correct_faster": 1, "compile_error": 3}}])
    assert len(fig["data"]) == len(OUTCOMES)  # every outcome keeps its trace (and colour)
    assert sorted(t["name"] for t in fig["data"] if t["showlegend"]) == ["compile error", "correct faster"]
    assert fig["layout"]["height"] == charts.chart_height(1, legend=2)


def test_line_charts_make_room_for_their_legend_and_empty_charts_are_short():
    few = charts.fast_curves([{"label": "a", "n": [1, 2], "fast": [0.1, 0.2]}])
    many = charts.fast_curves([{"label": f"s{i}", "n": [1, 2], "fast": [0.1, 0.2]} for i in range(20)])
    assert few["layout"]["height"] < many["layout"]["height"]
    assert many["layout"]["height"] >= 20 * charts.LEGEND_ROW_PX
    empty = charts.geomean_bars([])
    assert charts.empty_message(empty) and empty["layout"]["height"] <= 200


@pytest.mark.parametrize(
    "median_s, spread, text",
    [
        (1.23e-3, 0.08, "1.230 ms ± 4%"),  # spread is (p90 - p10) / median: ± half of it
        (13.4e-3, 0.02, "13.400 ms ± 1%"),
        (2.9e-4, 0.004, "0.290 ms ± 0.2%"),
        (2.9e-4, 0.0, "0.290 ms ± 0%"),
        (1.23e-3, None, "1.230 ms"),  # no spread recorded: the time alone
        (None, 0.1, ""),
        ("n/a", 0.1, ""),
    ],
)
def test_time_spread_text(median_s, spread, text):
    assert time_spread_text(median_s, spread) == text


def test_time_spread_is_a_span_that_says_what_the_spread_is():
    html = str(time_spread(1.23e-3, 0.08))
    assert html.startswith('<span class="time-spread" title="median of the timed iterations')
    assert '1.230 ms <span class="spread">± 4%</span></span>' in html
    assert str(time_spread(1.23e-3)).endswith(">1.230 ms</span>") and time_spread(None, 0.1) == ""
