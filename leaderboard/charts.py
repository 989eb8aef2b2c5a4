"""Plotly figures, built in Python (plotly.graph_objects) from aggregate values.

Every function is pure: plain lists/dicts in, a figure dict (``{"data": [...], "layout":
{...}}``, JSON-ready) out. Pages embed the dict with ``json_script`` and static/js/charts.js
draws it with the plotly.js the portal serves itself (static/vendor/plotly.min.js).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from jaxbench.metrics import OUTCOMES
from jaxbench.record import Outcome

OUTCOME_COLORS = {
    Outcome.CORRECT_FASTER: "#1a7f37",
    Outcome.CORRECT_TIE: "#7f8fa6",
    Outcome.CORRECT_SLOWER: "#8cc152",
    Outcome.INCORRECT: "#e8a33d",
    Outcome.COMPILE_ERROR: "#c0362c",
    Outcome.RUNTIME_ERROR: "#e05d44",
    Outcome.TIMEOUT: "#8e44ad",
    Outcome.REJECTED: "#5b6475",
}
XLA_COLOR = "#5b6475"
EXPERT_COLOR = "#9a6700"
ACCENT = "#2457c5"
LABEL_CHARS = 40  # longer labels are cut on the axis; the hover shows them whole

# A small template (the default one would add ~10 kB to every figure).
_TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12, "color": "#1d2330"},
        paper_bgcolor="#ffffff",
        plot_bgcolor="#ffffff",
        colorway=[
            "#2457c5",
            "#1a7f37",
            "#c0362c",
            "#9a6700",
            "#8e44ad",
            "#0e7c86",
            "#d35400",
            "#5b6475",
            "#2c3e50",
            "#b03a78",
        ],
        xaxis={"gridcolor": "#eef1f5", "zerolinecolor": "#dfe3ea", "linecolor": "#dfe3ea"},
        yaxis={"gridcolor": "#eef1f5", "zerolinecolor": "#dfe3ea", "linecolor": "#dfe3ea"},
        margin={"l": 60, "r": 20, "t": 50, "b": 60},
        legend={"orientation": "h", "y": -0.2},
    )
)


_TEMPLATE_JSON = _TEMPLATE.to_plotly_json()


def _trace(kind: str, **props) -> dict:
    """A trace as plotly.js reads it. Built as a plain dict: plotly.graph_objects validates and
    deep-copies every property on construction, which was most of a cold leaderboard page
    (issue 13: 5 figures, ~75% of the request); the tests validate every figure with
    ``go.Figure`` instead, so a misspelt property still fails there."""
    return {"type": kind, **props}


def _hline(y: float, color: str, dash: str = "dash") -> dict:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y,
        "y1": y,
        "line": {"color": color, "width": 1.5, "dash": dash},
    }


def _short(label: str, limit: int = LABEL_CHARS) -> str:
    """A label cut to ``limit`` characters (the full text stays in the hover)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _title(text: str, subtitle: str | None = None) -> dict:
    """Left-aligned in the top margin: it never meets the y-axis title (centred on the plot
    area) nor the plot; the margin is sized for it in ``_figure``."""
    t: dict[str, Any] = {
        "text": text,
        "x": 0,
        "xref": "container",  # from the figure's left edge: long axis labels do not push it out
        "xanchor": "left",
        "y": 1,
        "yref": "container",
        "yanchor": "top",
        "pad": {"t": 10, "l": 12},
    }
    if subtitle:
        t["subtitle"] = {"text": subtitle, "font": {"size": 11, "color": "#5b6475"}}
    return t


def _figure(data: Sequence[Any], layout: Mapping[str, Any], *, empty: str | None = None) -> dict:
    """The figure dict. The title goes in the top margin (taller with a subtitle); ``empty``,
    when given, is the message shown in place of a chart that has nothing to show (axes
    hidden)."""
    lay = {"template": _TEMPLATE_JSON, **layout}
    title = lay.get("title") or {}
    margin = dict(_TEMPLATE_JSON["layout"]["margin"], **lay.get("margin", {}))
    margin["t"] = max(margin["t"], 72 if title.get("subtitle") else 50)
    lay["margin"] = margin
    if empty:
        lay["annotations"] = [
            {
                "name": "empty",
                "text": empty,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
                "xanchor": "center",
                "yanchor": "middle",
                "showarrow": False,
                "font": {"size": 14, "color": "#5b6475"},
            }
        ]
        lay["shapes"] = []
        lay["xaxis"] = {"visible": False}
        lay["yaxis"] = {"visible": False}
        lay["showlegend"] = False
        lay["height"] = 190  # a message, not an empty plot area
        lay["meta"] = {"empty": empty}
        data = []
    return {"data": list(data), "layout": lay}


def empty_message(fig: Mapping) -> str | None:
    """The message a figure shows instead of a chart, or None when it has something to show."""
    return (fig.get("layout", {}).get("meta") or {}).get("empty")


def _vline(x: float, color: str, dash: str = "dash") -> dict:
    return {
        "type": "line",
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "xref": "x",
        "x0": x,
        "x1": x,
        "line": {"color": color, "width": 1.5, "dash": dash},
    }


def _vnotes(marks: Sequence[tuple[float, str, str]]) -> list[dict]:
    """Labels of vertical reference lines, above the plot area: sorted by position, the
    lower line's label ends at its line and the higher one's starts there, so two close
    lines never print one label over the other ("expeXLA1.00x")."""
    out = []
    marks = sorted(marks)
    for i, (x, text, color) in enumerate(marks):
        right_of_line = i == len(marks) - 1 and len(marks) > 1
        out.append(
            {
                "xref": "x",
                "x": x,
                "xanchor": "left" if right_of_line else "right",
                "yref": "paper",
                "y": 1,
                "yanchor": "bottom",
                "text": text,
                "showarrow": False,
                "font": {"color": color, "size": 11},
            }
        )
    return out


ROW_PX = 28  # one bar, one heatmap row
LEGEND_ROW_PX = 20  # one entry of a vertical legend
CHROME_PX = 140  # the title above a plot and the x axis (ticks and title) under it
MIN_HEIGHT_PX = 190


def chart_height(
    rows: int,
    *,
    legend: int = 0,
    per_row: int = ROW_PX,
    chrome: int = CHROME_PX,
    minimum: int = MIN_HEIGHT_PX,
) -> int:
    """A chart's height in px from what it shows: ``chrome`` px for the title and the x axis,
    ``per_row`` px for each of its ``rows`` (a bar, a heatmap row) or, when taller, a line for
    each of the ``legend`` entries beside the plot; never below ``minimum``. A chart of 1 row is
    short and one of 30 rows tall: no mostly empty chart, no squeezed bars."""
    plot = max(per_row * max(rows, 0), LEGEND_ROW_PX * max(legend, 0) + (10 if legend else 0))
    return max(minimum, chrome + plot)


def _bar_height(n: int) -> int:
    return chart_height(n)


def _note_margin(marks: Sequence[tuple[float, str, str]]) -> int:
    """The right margin that keeps the label of the highest reference line inside the figure
    (``_vnotes`` starts it at its line, which may stand at the right edge of the plot)."""
    if len(marks) < 2:
        return 20
    text = max(marks)[1]
    return max(20, 7 * len(text) + 8)


def _int_step(length: int, most: int = 12) -> int:
    """An integer tick step (1, 2, 5, 10, 20, 50, ...) giving at most ``most`` ticks."""
    step, k = 1, 0
    while length / step > most:
        step = (1, 2, 5)[(k := k + 1) % 3] * 10 ** (k // 3)
    return step


def geomean_bars(
    rows: Sequence[Mapping],
    *,
    expert_geomean: float | None = None,
    title: str = "Floored geometric-mean speedup over XLA",
    subtitle: str | None = None,
    baseline: str = "XLA",
) -> dict:
    """Horizontal bars of the floored geomean per row (``label``, ``geomean``, optional
    ``low``/``high`` interval as error bars, ``tied``), first row on top; the XLA line at
    1.0x and the experts' line. Horizontal, so that labels never overlap whatever the
    number of rows; the height grows with them."""
    if not rows:
        return _figure([], {"title": _title(title, subtitle)}, empty="No ranked submission to show yet.")
    labels = [r["label"] for r in rows]
    x = [r["geomean"] for r in rows]
    plus = [max(0.0, (r.get("high") or r["geomean"]) - r["geomean"]) for r in rows]
    minus = [max(0.0, r["geomean"] - (r.get("low") or r["geomean"])) for r in rows]
    colors = ["#7a9be0" if r.get("tied") else ACCENT for r in rows]
    data = [
        _trace(
            "bar",
            y=[_short(lbl) for lbl in labels],
            x=x,
            orientation="h",
            name="floored geomean",
            customdata=[
                [lbl, r.get("low") or r["geomean"], r.get("high") or r["geomean"]] for lbl, r in zip(labels, rows)
            ],
            marker={"color": colors},
            error_x={
                "type": "data",
                "array": plus,
                "arrayminus": minus,
                "visible": True,
                "color": "#1d2330",
                "thickness": 1.2,
                "width": 4,
            },
            hovertemplate="%{customdata[0]}<br>%{x:.3f}x [%{customdata[1]:.2f}, %{customdata[2]:.2f}]<extra></extra>",
        )
    ]
    shapes = [_vline(1.0, XLA_COLOR)]
    marks = [(1.0, f"{baseline[:1].upper()}{baseline[1:]} 1.00x", XLA_COLOR)]
    if expert_geomean:
        shapes.append(_vline(expert_geomean, EXPERT_COLOR, "dot"))
        marks.append((expert_geomean, f"experts {expert_geomean:.2f}x", EXPERT_COLOR))
    top = max(x + [expert_geomean or 1.0, 1.0]) + max(plus + [0.0])
    return _figure(
        data,
        {
            "title": _title(title, subtitle),
            "shapes": shapes,
            "annotations": _vnotes(marks),
            "xaxis": {"title": {"text": f"floored geomean speedup over {baseline} (x)"}, "range": [0, top * 1.12]},
            "yaxis": {"type": "category", "autorange": "reversed", "automargin": True},
            "margin": {"t": 72 if subtitle else 64, "r": _note_margin(marks)},
            "showlegend": False,
            "height": _bar_height(len(rows)),
        },
    )


def fast_curves(
    curves: Sequence[Mapping],
    *,
    p: float = 1.0,
    title: str | None = None,
    subtitle: str | None = None,
    baseline: str = "XLA",
) -> dict:
    """fast_p@N against N, one line per ``{label, n: [...], fast: [...]}``; N is an integer
    axis (ticks at whole samples), the legend sits to the right of the plot."""
    title = title or f"fast_{p:g}@N: share of workloads with a kernel faster than {p:g}x {baseline}"
    curves = [c for c in curves if len(c["n"])]
    if not curves:
        return _figure([], {"title": _title(title, subtitle)}, empty="No sample evaluated yet: no fast@N curve.")
    length = max(max(c["n"]) for c in curves)
    data = [
        _trace(
            "scatter",
            x=list(c["n"]),
            y=list(c["fast"]),
            mode="lines+markers" if length <= 20 else "lines",
            name=_short(c["label"], 32),
            line={"shape": "hv"},
            marker={"size": 5},
            hovertemplate=c["label"] + "<br>N=%{x}: %{y:.1%}<extra></extra>",
        )
        for c in curves
    ]
    layout: dict[str, Any] = {
        "title": _title(title, subtitle),
        "xaxis": {
            "title": {"text": "samples per workload N"},
            "tickmode": "linear",
            "tick0": 1,
            "dtick": _int_step(length),
            "tickformat": "d",
            "range": [0.5, length + 0.5],
        },
        "yaxis": {"title": {"text": f"fast_{p:g}@N"}, "tickformat": ".0%", "range": [-0.02, 1.02]},
        "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
        "height": chart_height(0, legend=len(curves), minimum=340),
        "showlegend": True,
    }
    if all(v == 0 for c in curves for v in c["fast"]):
        layout["annotations"] = [
            {
                "name": "none-fast",
                "text": f"No workload has a kernel faster than {p:g}x {baseline} within these samples.",
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.55,
                "showarrow": False,
                "font": {"size": 13, "color": "#5b6475"},
            }
        ]
    return _figure(data, layout)


def speedup_heatmap(
    rows: Sequence[Mapping],
    workloads: Sequence[str],
    *,
    title: str = "Best speedup per workload (full budget)",
    subtitle: str | None = None,
) -> dict:
    """Submissions x workloads; ``rows``: ``{label, best: {wid: speedup | None}}`` and, under a
    version filter other than the current versions, ``versions: {wid: "v1, harness 1.0.0"}`` for
    the cells whose result comes from an earlier version (the hover names it). The colour is
    log2 of the speedup (centred on XLA = 1x); blank = no correct kernel. The figure grows with
    its data: at least 28 px per submission row; its page gives it the full width so that 50
    workload columns stay readable."""
    z, text = [], []
    for r in rows:
        best = r.get("best") or {}
        versions = r.get("versions") or {}
        zr, tr = [], []
        for wid in workloads:
            s = best.get(wid)
            zr.append(None if s is None else round(math.log2(s), 3))  # a colour: 3 decimals are plenty
            cell = "no correct kernel" if s is None else f"{s:.2f}x"
            tr.append(f"{cell} ({versions[wid]})" if wid in versions else cell)
        z.append(zr)
        text.append(tr)
    layout_title = _title(title, subtitle)
    if not rows or not workloads:
        return _figure([], {"title": layout_title}, empty="No submission to show yet.")
    if all(v is None for zr in z for v in zr):
        return _figure([], {"title": layout_title}, empty="No correct kernel on these workloads yet.")
    data = [
        _trace(
            "heatmap",
            z=z,
            x=list(workloads),
            y=[r["label"] for r in rows],  # whole in the hover; the axis shows them cut (ticktext)
            text=text,
            colorscale="RdBu",
            zmid=0,
            zmin=-2,
            zmax=2,
            xgap=1,
            ygap=1,
            hoverongaps=False,
            colorbar={
                "title": {"text": "speedup", "side": "right"},  # beside the bar, never on its top tick
                "tickvals": [-2, -1, 0, 1, 2],
                "ticktext": ["0.25x", "0.5x", "1x", "2x", "4x"],
                "thickness": 14,
            },
            hovertemplate="%{y}<br>%{x}: %{text}<extra></extra>",
        )
    ]
    labels = [r["label"] for r in rows]
    return _figure(
        data,
        {
            "title": layout_title,
            "xaxis": {
                "type": "category",
                "tickangle": -90 if len(workloads) > 20 else -45,
                "tickfont": {"size": 10},
                "automargin": True,
                "title": {"text": "workload"},
            },
            "yaxis": {
                "type": "category",
                "autorange": "reversed",
                "automargin": True,
                "tickvals": labels,
                "ticktext": [_short(label) for label in labels],
            },
            "margin": {"t": 72 if subtitle else 56},
            # room under the plot for the workload names standing upright
            "height": chart_height(len(rows), chrome=210, minimum=250),
        },
    )


def expert_gap_bars(
    items: Sequence[Mapping],
    *,
    title: str = "Share of the expert kernels' floored geomean",
    subtitle: str | None = None,
    per_workload: bool = False,
) -> dict:
    """Horizontal bars of ``value`` (a ratio: 0.77 = 77% of expert) per ``label``, with the
    100% line. Per submission (% of expert geomean) or, with ``per_workload``, per workload
    (s_w / max(1, expert speedup))."""
    items = list(items)
    if not items or all(i["value"] is None for i in items):
        return _figure([], {"title": _title(title, subtitle)}, empty="No expert comparison to show.")
    labels = [i["label"] for i in items]
    values = [i["value"] for i in items]
    colors = [("#1a7f37" if v >= 1 else "#c0362c") if v is not None else "#dfe3ea" for v in values]
    top = max([v for v in values if v is not None] + [1.0])
    data = [
        _trace(
            "bar",
            y=[_short(lbl) for lbl in labels],
            x=values,
            orientation="h",
            customdata=labels,
            marker={"color": colors},
            hovertemplate="%{customdata}<br>%{x:.0%} of expert<extra></extra>",
        )
    ]
    return _figure(
        data,
        {
            "title": _title(title, subtitle),
            "shapes": [_vline(1.0, EXPERT_COLOR)],
            "annotations": _vnotes([(1.0, "expert 100%", EXPERT_COLOR)]),
            "xaxis": {
                "tickformat": ".0%",
                "range": [0, top * 1.12],
                "title": {"text": "gap to expert" if per_workload else "% of expert geomean"},
            },
            "yaxis": {"type": "category", "autorange": "reversed", "automargin": True},
            "margin": {"t": 72 if subtitle else 64},
            "showlegend": False,
            "height": _bar_height(len(items)),
        },
    )


def outcome_shares(
    rows: Sequence[Mapping], *, title: str = "Outcome shares of all samples", subtitle: str | None = None
) -> dict:
    """Stacked horizontal bars of each row's outcome shares (``{label, counts: {outcome: n}}``),
    legend to the right of the plot."""
    if not rows or not any(sum((r.get("counts") or {}).values()) for r in rows):
        return _figure([], {"title": _title(title, subtitle)}, empty="No evaluated sample yet.")
    labels = [_short(r["label"]) for r in rows]
    totals = [sum((r.get("counts") or {}).values()) or 1 for r in rows]
    data = []
    for outcome in OUTCOMES:
        vals = [(r.get("counts") or {}).get(outcome, 0) / t for r, t in zip(rows, totals)]
        data.append(
            _trace(
                "bar",
                y=labels,
                x=vals,
                name=outcome.replace("_", " "),
                orientation="h",
                customdata=[r["label"] for r in rows],
                marker={"color": OUTCOME_COLORS[outcome]},
                hovertemplate="%{customdata}<br>" + outcome + ": %{x:.1%}<extra></extra>",
                showlegend=any(vals),  # the legend names the outcomes that occur
            )
        )
    shown = sum(1 for t in data if t["showlegend"])
    return _figure(
        data,
        {
            "title": _title(title, subtitle),
            "barmode": "stack",
            "xaxis": {"tickformat": ".0%", "range": [0, 1], "title": {"text": "share of samples"}},
            "yaxis": {"autorange": "reversed", "automargin": True, "type": "category"},
            "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
            "height": chart_height(len(rows), legend=shown),
        },
    )


def roofline(
    points: Sequence[Mapping],
    *,
    peak_flops: float,
    peak_bandwidth: float,
    title: str = "Roofline",
    baseline: str = "XLA",
) -> dict:
    """Achieved FLOP/s against arithmetic intensity (FLOP/byte), log-log, under the target's
    roofline min(peak FLOP/s, intensity x bandwidth). ``points``: ``{label, intensity,
    flops_per_s, kind}`` (kind: xla, the workload's baseline, named ``baseline``; expert;
    submission)."""
    xs = [p["intensity"] for p in points if p.get("intensity")]
    if not any(p.get("intensity") and p.get("flops_per_s") for p in points):
        return _figure([], {"title": _title(title)}, empty="No measured time to place on the roofline yet.")
    lo = min(xs + [peak_flops / peak_bandwidth if peak_bandwidth else 1.0]) / 10
    hi = max(xs + [peak_flops / peak_bandwidth if peak_bandwidth else 1.0]) * 10
    ridge = peak_flops / peak_bandwidth if peak_bandwidth else None
    line_x = [lo] + ([ridge] if ridge and lo < ridge < hi else []) + [hi]
    line_y = [min(peak_flops, x * peak_bandwidth) for x in line_x]
    data = [
        _trace(
            "scatter",
            x=line_x,
            y=line_y,
            mode="lines",
            name="roofline",
            line={"color": "#1d2330"},
            hovertemplate="%{x:.3g} FLOP/B: %{y:.3g} FLOP/s<extra>roofline</extra>",
        )
    ]
    styles = {
        "xla": (baseline, XLA_COLOR, "square", 12),
        "expert": ("expert", EXPERT_COLOR, "diamond", 10),
        "submission": ("submissions", ACCENT, "circle", 8),
    }
    for kind, (name, color, symbol, size) in styles.items():
        pts = [p for p in points if p.get("kind") == kind and p.get("intensity") and p.get("flops_per_s")]
        if not pts:
            continue
        data.append(
            _trace(
                "scatter",
                x=[p["intensity"] for p in pts],
                y=[p["flops_per_s"] for p in pts],
                mode="markers",
                name=name,
                text=[p["label"] for p in pts],
                marker={
                    "color": color,
                    "symbol": symbol,
                    "size": size,
                    "opacity": 0.85,
                    "line": {"width": 1, "color": "#fff"},
                },
                hovertemplate="%{text}<br>%{y:.3g} FLOP/s<extra></extra>",
            )
        )
    return _figure(
        data,
        {
            "title": _title(title),
            "xaxis": {"type": "log", "title": {"text": "arithmetic intensity (FLOP/byte)"}, "automargin": True},
            "yaxis": {"type": "log", "title": {"text": "achieved FLOP/s"}, "automargin": True},
            "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
            "height": chart_height(0, legend=len(data), minimum=360),
        },
    )


SCATTER_SIZES = (13, 10, 7, 5)  # one per compared submission: equal points stay visible as rings


def speedup_scatter(
    series: Sequence[Mapping],
    workloads: Sequence[str],
    *,
    title: str = "Best speedup per workload",
    subtitle: str | None = None,
) -> dict:
    """One marker series per submission: ``{label, best: {wid: speedup | None}, low: {wid:
    lo}, high: {wid: hi}}`` over the workloads (log scale, XLA line at 1x). Each series sits
    at its own offset inside a workload's slot (``scattermode: group``) with its own marker
    size and interval error bars, so that equal points never hide each other; the hover
    names every value at a workload."""
    data = []
    for k, s in enumerate(series):
        best = s.get("best") or {}
        low, high = s.get("low") or {}, s.get("high") or {}
        xs = [w for w in workloads if best.get(w) is not None]
        ys = [best[w] for w in xs]
        plus = [max(0.0, (high.get(w) or best[w]) - best[w]) for w in xs]
        minus = [max(0.0, best[w] - (low.get(w) or best[w])) for w in xs]
        data.append(
            _trace(
                "scatter",
                x=xs,
                y=ys,
                mode="markers",
                name=_short(s["label"], 32),
                marker={
                    "size": SCATTER_SIZES[k % len(SCATTER_SIZES)],
                    "opacity": 0.85,
                    "line": {"width": 1, "color": "#ffffff"},
                },
                error_y={
                    "type": "data",
                    "array": plus,
                    "arrayminus": minus,
                    "visible": True,
                    "thickness": 1,
                    "width": 3,
                },
                hovertemplate=s["label"] + "<br>%{x}: %{y:.2f}x<extra></extra>",
            )
        )
    if not any(len(t["x"]) for t in data):
        return _figure([], {"title": _title(title, subtitle)}, empty="No correct kernel among these submissions yet.")
    return _figure(
        data,
        {
            "title": _title(title, subtitle),
            "shapes": [_hline(1.0, XLA_COLOR)],
            "scattermode": "group",
            "scattergap": 0.4,
            "hovermode": "x",
            "xaxis": {
                "type": "category",
                "categoryorder": "array",
                "categoryarray": list(workloads),
                "tickangle": -90 if len(workloads) > 20 else -45,
                "tickfont": {"size": 10},
                "automargin": True,
                "title": {"text": "workload"},
            },
            "yaxis": {"type": "log", "title": {"text": "speedup over XLA (x)"}, "automargin": True},
            "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
            "height": chart_height(0, legend=len(data), chrome=200, minimum=400),
        },
    )


def outcome_breakdown(counts: Mapping[str, int], *, title: str = "Outcomes") -> dict:
    """One submission's samples by outcome: horizontal bars (outcome names never overlap)."""
    if not any(counts.get(o, 0) for o in OUTCOMES):
        return _figure([], {"title": _title(title)}, empty="No evaluated sample yet.")
    data = [
        _trace(
            "bar",
            y=[o.replace("_", " ") for o in OUTCOMES],
            x=[counts.get(o, 0) for o in OUTCOMES],
            orientation="h",
            marker={"color": [OUTCOME_COLORS[o] for o in OUTCOMES]},
            hovertemplate="%{y}: %{x}<extra></extra>",
        )
    ]
    return _figure(
        data,
        {
            "title": _title(title),
            "showlegend": False,
            "height": _bar_height(len(OUTCOMES)),
            "yaxis": {"type": "category", "autorange": "reversed", "automargin": True},
            "xaxis": {"title": {"text": "samples"}, "rangemode": "tozero"},
        },
    )
