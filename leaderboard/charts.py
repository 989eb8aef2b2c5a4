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


def _figure(data: Sequence[Any], layout: Mapping[str, Any]) -> dict:
    return {"data": list(data), "layout": {"template": _TEMPLATE_JSON, **layout}}


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


def _note(y: float, text: str, color: str) -> dict:
    return {
        "xref": "paper",
        "x": 1,
        "xanchor": "right",
        "yref": "y",
        "y": y,
        "yanchor": "bottom",
        "text": text,
        "showarrow": False,
        "font": {"color": color, "size": 11},
    }


def geomean_bars(
    rows: Sequence[Mapping],
    *,
    expert_geomean: float | None = None,
    title: str = "Floored geometric-mean speedup over XLA",
) -> dict:
    """Bars of the floored geomean per row (``label``, ``geomean``, optional ``low``/``high``
    interval, ``tied``), the XLA line at 1.0x and the experts' mark."""
    labels = [r["label"] for r in rows]
    y = [r["geomean"] for r in rows]
    plus = [max(0.0, (r.get("high") or r["geomean"]) - r["geomean"]) for r in rows]
    minus = [max(0.0, r["geomean"] - (r.get("low") or r["geomean"])) for r in rows]
    colors = ["#7a9be0" if r.get("tied") else ACCENT for r in rows]
    data = [
        _trace(
            "bar",
            x=labels,
            y=y,
            name="floored geomean",
            marker={"color": colors},
            error_y={
                "type": "data",
                "array": plus,
                "arrayminus": minus,
                "visible": True,
                "color": "#1d2330",
                "thickness": 1,
            },
            hovertemplate="%{x}<br>%{y:.3f}x<extra></extra>",
        )
    ]
    shapes, notes = [_hline(1.0, XLA_COLOR)], [_note(1.0, "XLA 1.0x", XLA_COLOR)]
    if expert_geomean:
        shapes.append(_hline(expert_geomean, EXPERT_COLOR, "dot"))
        notes.append(_note(expert_geomean, f"experts {expert_geomean:.2f}x", EXPERT_COLOR))
        data.append(
            _trace(
                "scatter",
                x=[labels[0]] if labels else [""],
                y=[expert_geomean],
                mode="markers",
                name="experts",
                marker={"symbol": "diamond", "size": 10, "color": EXPERT_COLOR},
                hovertemplate="experts %{y:.3f}x<extra></extra>",
            )
        )
    top = max(y + [expert_geomean or 1.0, 1.0]) + max(plus + [0.0])
    return _figure(
        data,
        {
            "title": {"text": title},
            "shapes": shapes,
            "annotations": notes,
            "yaxis": {"title": {"text": "speedup (x)"}, "range": [0, top * 1.1]},
            "xaxis": {"tickangle": -35, "automargin": True},
            "showlegend": False,
            "height": 420,
        },
    )


def fast_curves(curves: Sequence[Mapping], *, p: float = 1.0, title: str | None = None) -> dict:
    """fast_p@N against N, one line per ``{label, n: [...], fast: [...]}``."""
    data = [
        _trace(
            "scatter",
            x=list(c["n"]),
            y=list(c["fast"]),
            mode="lines",
            name=c["label"],
            line={"shape": "hv"},
            hovertemplate=c["label"] + "<br>N=%{x}: %{y:.1%}<extra></extra>",
        )
        for c in curves
    ]
    return _figure(
        data,
        {
            "title": {"text": title or f"fast@N (p = {p:g}): share of workloads beating XLA"},
            "xaxis": {"title": {"text": "samples per workload N"}, "rangemode": "tozero"},
            "yaxis": {"title": {"text": f"fast_{p:g}@N"}, "tickformat": ".0%", "range": [0, 1.02]},
            "height": 420,
            "showlegend": True,
        },
    )


def speedup_heatmap(
    rows: Sequence[Mapping], workloads: Sequence[str], *, title: str = "Best speedup per workload (full budget)"
) -> dict:
    """Submissions x workloads; ``rows``: ``{label, best: {wid: speedup | None}}``. The colour
    is log2 of the speedup (centred on XLA = 1x); blank = no correct kernel."""
    z, text = [], []
    for r in rows:
        best = r.get("best") or {}
        zr, tr = [], []
        for wid in workloads:
            s = best.get(wid)
            zr.append(None if s is None else math.log2(s))
            tr.append("no correct kernel" if s is None else f"{s:.2f}x")
        z.append(zr)
        text.append(tr)
    data = [
        _trace(
            "heatmap",
            z=z,
            x=list(workloads),
            y=[r["label"] for r in rows],
            text=text,
            colorscale="RdBu",
            zmid=0,
            zmin=-2,
            zmax=2,
            hoverongaps=False,
            colorbar={
                "title": {"text": "speedup"},
                "tickvals": [-2, -1, 0, 1, 2],
                "ticktext": ["0.25x", "0.5x", "1x", "2x", "4x"],
            },
            hovertemplate="%{y}<br>%{x}: %{text}<extra></extra>",
        )
    ]
    return _figure(
        data,
        {
            "title": {"text": title},
            "xaxis": {"type": "category", "tickangle": -60},
            "yaxis": {"type": "category", "autorange": "reversed", "automargin": True},
            "height": max(300, 120 + 22 * len(rows)),
        },
    )


def expert_gap_bars(
    items: Sequence[Mapping], *, title: str = "Share of the expert kernels' floored geomean", per_workload: bool = False
) -> dict:
    """Bars of ``value`` (a ratio: 0.77 = 77% of expert) per ``label``, with the 100% line.
    Per submission (% of expert geomean) or, with ``per_workload``, per workload
    (s_w / max(1, expert speedup))."""
    labels = [i["label"] for i in items]
    values = [i["value"] for i in items]
    colors = [("#1a7f37" if v >= 1 else "#c0362c") if v is not None else "#dfe3ea" for v in values]
    data = [
        _trace(
            "bar",
            x=labels,
            y=values,
            marker={"color": colors},
            hovertemplate="%{x}<br>%{y:.0%} of expert<extra></extra>",
        )
    ]
    return _figure(
        data,
        {
            "title": {"text": title},
            "shapes": [_hline(1.0, EXPERT_COLOR)],
            "annotations": [_note(1.0, "expert", EXPERT_COLOR)],
            "yaxis": {
                "tickformat": ".0%",
                "title": {"text": "gap to expert" if per_workload else "% of expert geomean"},
            },
            "xaxis": {"tickangle": -35, "automargin": True, "type": "category"},
            "showlegend": False,
            "height": 380,
        },
    )


def outcome_shares(rows: Sequence[Mapping], *, title: str = "Outcome shares of all samples") -> dict:
    """Stacked horizontal bars of each row's outcome shares (``{label, counts: {outcome: n}}``)."""
    labels = [r["label"] for r in rows]
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
                marker={"color": OUTCOME_COLORS[outcome]},
                hovertemplate="%{y}<br>" + outcome + ": %{x:.1%}<extra></extra>",
            )
        )
    return _figure(
        data,
        {
            "title": {"text": title},
            "barmode": "stack",
            "xaxis": {"tickformat": ".0%", "range": [0, 1]},
            "yaxis": {"autorange": "reversed", "automargin": True, "type": "category"},
            "height": max(260, 120 + 24 * len(rows)),
        },
    )


def roofline(points: Sequence[Mapping], *, peak_flops: float, peak_bandwidth: float, title: str = "Roofline") -> dict:
    """Achieved FLOP/s against arithmetic intensity (FLOP/byte), log-log, under the target's
    roofline min(peak FLOP/s, intensity x bandwidth). ``points``: ``{label, intensity,
    flops_per_s, kind}`` (kind: xla, expert, submission)."""
    xs = [p["intensity"] for p in points if p.get("intensity")]
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
        "xla": ("XLA", XLA_COLOR, "square"),
        "expert": ("expert", EXPERT_COLOR, "diamond"),
        "submission": ("submissions", ACCENT, "circle"),
    }
    for kind, (name, color, symbol) in styles.items():
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
                marker={"color": color, "symbol": symbol, "size": 10, "opacity": 0.85},
                hovertemplate="%{text}<br>%{y:.3g} FLOP/s<extra></extra>",
            )
        )
    return _figure(
        data,
        {
            "title": {"text": title},
            "xaxis": {"type": "log", "title": {"text": "arithmetic intensity (FLOP/byte)"}},
            "yaxis": {"type": "log", "title": {"text": "achieved FLOP/s"}},
            "height": 420,
        },
    )


def speedup_scatter(
    series: Sequence[Mapping], workloads: Sequence[str], *, title: str = "Best speedup per workload"
) -> dict:
    """One marker series per submission: ``{label, best: {wid: speedup | None}}`` over the
    workloads (log scale, XLA line at 1x)."""
    data = []
    for s in series:
        best = s.get("best") or {}
        xs = [w for w in workloads if best.get(w) is not None]
        data.append(
            _trace(
                "scatter",
                x=xs,
                y=[best[w] for w in xs],
                mode="markers",
                name=s["label"],
                marker={"size": 9, "opacity": 0.8},
                hovertemplate=s["label"] + "<br>%{x}: %{y:.2f}x<extra></extra>",
            )
        )
    return _figure(
        data,
        {
            "title": {"text": title},
            "shapes": [_hline(1.0, XLA_COLOR)],
            "xaxis": {"type": "category", "categoryorder": "array", "categoryarray": list(workloads), "tickangle": -60},
            "yaxis": {"type": "log", "title": {"text": "speedup over XLA (x)"}},
            "height": 420,
        },
    )


def outcome_breakdown(counts: Mapping[str, int], *, title: str = "Outcomes") -> dict:
    """One submission's samples by outcome (bars)."""
    data = [
        _trace(
            "bar",
            x=[o.replace("_", " ") for o in OUTCOMES],
            y=[counts.get(o, 0) for o in OUTCOMES],
            marker={"color": [OUTCOME_COLORS[o] for o in OUTCOMES]},
            hovertemplate="%{x}: %{y}<extra></extra>",
        )
    ]
    return _figure(
        data, {"title": {"text": title}, "showlegend": False, "height": 320, "yaxis": {"title": {"text": "samples"}}}
    )
