"""The public leaderboard page (``/leaderboard/``) and its exports."""

from __future__ import annotations

from django.core.cache import cache
from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from catalog.models import HardwareTarget
from evaluator.models import current_harness_version
from jaxbench.traces import SELECTION_LABELS
from leaderboard import board_versions, charts, test_run_preview
from leaderboard.columns import COLUMNS
from leaderboard.data import (
    BUDGET_CHOICES,
    CACHE_SECONDS,
    SORTS,
    Query,
    cache_key,
    chart_inputs,
    chart_label,
    leaderboard_data,
    shown_sets,
    visibility_stamp,
)
from leaderboard.study import PUBLISHED_RESULTS, REPORTED_NOT_EVALUATED
from leaderboard.templatetags.leaderboard_extras import big, interval, num, pct, selection_badge
from leaderboard.templatetags.leaderboard_extras import x as fx
from leaderboard.views.exports import export_response, wants_export
from leaderboard.views.table_rows import esc

EXPORT_COLUMNS = [
    "section",
    "rank",
    "tied",
    "submission",
    "team",
    "method",
    "model",
    "framework",
    "kind",
    "sampling",
    "selection",
    "provenance",
    "solved",
    "set_size",
    "correctness",
    "geomean",
    "geomean_low",
    "geomean_high",
    "ugeomean",
    "ugeomean_low",
    "ugeomean_high",
    "fast",
    "attempted",
    "upstream",
    "expert_pct",
    "tokens_per_solved",
    "cost_per_solved",
    "fast_per_dollar",
    "date",
    "n_samples",
    "candidates_total",
    "jax_version",
    "harness_version",
    "earlier_versions",
    "version_note",
    "versions_used",
    "hardware",
    "workload_set",
    "budget",
    "url",
]


# fast_p@N thresholds offered by the board's menu (any other p still works in the query string)
P_CHOICES = (1.0, 1.1, 1.25, 1.5, 2.0, 3.0)


def build_figures(q: Query, data: dict) -> list[dict]:
    """The leaderboard's charts (cached with the data). ``wide`` charts take the full width
    of the page (the heatmap's 50 workload columns, the curves' legend). Every chart is built
    from one list of rows in rank order, each chart item's label and numbers read from the
    same row (``chart_inputs``' entries for the numbers the rows leave out)."""
    inputs = chart_inputs(q, data)
    top = inputs["top"]
    entries = inputs["rows"]
    meta = data["meta"]
    budget = "every sample" if q.n is None else f"the first {q.n} samples per workload"
    shown = f"top {len(top)} ranked rows" if len(data["rows"]) > len(top) else f"{len(top)} ranked rows"
    if not meta["comparable"]:  # every chart says which versions it shows
        shown += f"; {meta['versions_label']}"
    bars = [
        {
            "label": chart_label(r),
            "geomean": r["geomean"],
            "low": r["geomean_low"],
            "high": r["geomean_high"],
            "tied": r["tied"],
        }
        for r in top
    ]
    experts = next((r for r in data["references"] if r["kind"] == "expert"), None)
    figs = [
        {
            "id": "fig-geomean",
            "title": "Floored geomean",
            "figure": charts.geomean_bars(
                bars,
                expert_geomean=experts["geomean"] if experts else None,
                title=f"Floored geomean over {meta['workload_set_label']}",
                subtitle=f"{shown}, {budget}; bars: 95% interval",
                baseline=meta["baseline"],
            ),
        },
        {
            "id": "fig-fast",
            "title": "fast@N",
            "wide": True,
            "figure": charts.fast_curves(
                inputs["curves"],
                p=q.p,
                title=f"fast_{q.p:g}@N on {meta['workload_set_label']}",
                subtitle=f"share of workloads with a kernel faster than {q.p:g}x {meta['baseline']} among the first "
                f"N samples (top {len(inputs['curves'])} rows)",
                baseline=meta["baseline"],
            ),
        },
        {
            "id": "fig-heatmap",
            "title": "Speedup heatmap",
            "wide": True,
            "figure": charts.speedup_heatmap(
                [
                    {
                        "label": e["label"],
                        "best": e["best"],
                        "versions": {wid: board_versions.version_text(v) for wid, v in e["versions"].items()},
                    }
                    for e in entries
                ],
                [w["wid"] for w in data["members"]],
                title="Best speedup per workload",
                subtitle=f"{shown}, every sample; blank: no correct kernel",
            ),
        },
    ]
    if meta["expert_geomean"]:
        figs.append(
            {
                "id": "fig-expert-gap",
                "title": "Gap to expert",
                "figure": charts.expert_gap_bars(
                    [{"label": chart_label(r), "value": r["expert_pct"]} for r in top],
                    title="% of expert geomean, expert set",
                    subtitle=f"{shown}, {budget}",
                ),
            }
        )
    figs.append(
        {
            "id": "fig-outcomes",
            "title": "Outcome shares",
            "figure": charts.outcome_shares(
                [{"label": e["label"], "counts": e["counts"]} for e in entries],
                subtitle=f"{shown}, every sample",
            ),
        }
    )
    return figs


# each column's <td> opening tag, fixed per column (its classes never depend on the row)
_TD = {
    c.key: '<td data-col="{}"{}>'.format(
        c.key,
        f' class="{cls}"'
        if (cls := " ".join(x for x in ("num" if c.num else "", "sticky-col" if c.key == "rank" else "") if x))
        else "",
    )
    for c in COLUMNS
}


def _upstream_cell(r: dict) -> str:
    if r.get("upstream") is None:
        why = "defined at the full budget" if r.get("budget") != "all" else "no workload attempted"
        return f'<span class="muted" title="{why}">—</span>'
    # the count in the tooltip: a second line would widen the ranking past 1280 px
    return f'<span title="over the {num(r["attempted"])} attempted workloads">{fx(r["upstream"])}</span>'


def _row_cells(r: dict) -> dict[str, str]:
    """The cells of one row by column key (leaderboard.columns gives their order), as HTML. Text
    from the rows is escaped (``esc``); numbers formatted here (``x``, ``pct``, ``num``, ``big``,
    ``interval``) are digits, signs and units only, so they are not."""
    if r["is_reference"]:
        note = esc(r["note"])
        return {
            "rank": f'<span class="rank">—</span> {esc(r["team"])} · {esc(r["method"])} '
            f'<span class="badge" title="{note}">reference</span>',
            "geomean": f"<strong>{fx(r['geomean'])}</strong>",
            "solved": esc(f"{r['solved']}/{r['set_size']}") if r.get("solved") is not None else "",
            "fast": pct(r["fast"]),
            "upstream": fx(r["upstream"]) if r.get("upstream") is not None else "",
            "ugeomean": fx(r["ugeomean"]) if r.get("ugeomean") is not None else "",
            "expert": pct(r["expert_pct"], 0) if r.get("expert_pct") else "",
            "provenance": f'<span class="muted">{note}</span>',
        }
    badges = ""
    if r["sampling"] == "independent":
        badges = (
            ' <span class="badge" title="independent samples: expected values over random N-subsets">best-of-N</span>'
        )
    badges += esc(selection_badge(r.get("selection"), r.get("selector")))
    if r.get("versions_used"):
        badges += (
            f' <span class="badge warn" title="{esc(r["version_note"])}: not comparable with the current versions">'
            "from earlier versions</span>"
        )
    elif r.get("earlier_versions"):
        badges += (
            f' <span class="badge warn" title="{esc(r["earlier_versions"])} results of an earlier workload or harness '
            'version are kept but not counted here: see the submission page">earlier versions</span>'
        )
    tied = ' <span class="badge warn" title="tied: geomean intervals overlap">≈</span>' if r["tied"] else ""
    sub = esc(r["submission"])
    iv = interval(r)
    return {
        "rank": f'<input type="checkbox" class="pick" name="s" value="{sub}" form="compare-form" aria-label="compare #{sub}">'
        f' <span class="rank">{esc(r["rank"])}</span>{tied} <a href="/teams/{esc(r["team_slug"])}/">{esc(r["team"])}</a>'
        f' · <a href="{esc(r["url"])}">{esc(r["method"])}</a>{badges}',
        "geomean": f'<strong title="interval {iv}">{fx(r["geomean"])}</strong> <span class="interval muted small">{iv}</span>',
        "solved": f"{num(r['solved'])}/{esc(r['set_size'])}",
        "fast": pct(r["fast"]),
        "upstream": _upstream_cell(r),
        "ugeomean": f'{fx(r["ugeomean"]) if r["ugeomean"] is not None else "—"} '
        f'<span class="muted small">{interval(r, "ugeomean")}</span>',
        "expert": pct(r["expert_pct"], 0),
        "correctness": pct(r["correctness"]),
        "model": esc(r["model"]),
        "tokens": big(r["tokens_per_solved"]),
        "cost": f"${r['cost_per_solved']:.2f}" if r["cost_per_solved"] is not None else "",
        "fast_per_dollar": f"{pct(r['fast_per_dollar'])}/$" if r["fast_per_dollar"] is not None else "",
        "date": esc(r["date"]),
        "provenance": '<span class="badge verified">verified here</span>',
        "jax": f'<span class="mono">{esc(r["jax_version"])}</span>',
        "harness": f'<span class="mono">{esc(r["harness_version"])}</span>',
    }


def _row_html(r: dict) -> str:
    """One table row (built in Python: the board has hundreds of rows), a cell per column."""
    cells = _row_cells(r)
    body = "".join(f"{td}{cells.get(key, '')}</td>" for key, td in _TD.items())
    if r["is_reference"]:
        return mark_safe(f'<tr class="reference" data-reference="{esc(r["kind"])}">{body}</tr>')
    return mark_safe(f'<tr data-submission="{esc(r["submission"])}" class="{"tied" if r["tied"] else ""}">{body}</tr>')


def board_context(q: Query, data: dict, figures: list[dict]) -> dict:
    # Rows and reference rows together: references sit where their geomean puts them when the
    # table is sorted by geomean; otherwise under the ranked rows.
    table = [dict(r, is_reference=False) for r in data["rows"]]
    refs = [dict(r, is_reference=True) for r in data["references"]]
    if q.sort.lstrip("-") == "geomean":
        desc = q.sort.startswith("-")
        for ref in refs:
            pos = next(
                (
                    i
                    for i, r in enumerate(table)
                    if not r["is_reference"]
                    and ((r["geomean"] < ref["geomean"]) if desc else (r["geomean"] > ref["geomean"]))
                ),
                len(table),
            )
            table.insert(pos, ref)
    else:
        table.extend(refs)
    for r in table:
        r["html"] = _row_html(r)
    fast_label = format_html(
        "fast{}@{}",
        format_html("<sub>{}</sub>", f"{q.p:g}") if q.p != 1.0 else "",
        "all" if q.n is None else q.n,
    )
    columns = [
        {
            "key": c.key,
            "label": fast_label if c.key == "fast" else c.label,
            "definition": c.definition,
            "docs_url": c.docs_url,
            "sort": c.sort,
            "sort_link": "?" + q.sort_qs(c.sort) if c.sort else None,
            "optional": c.optional,
            "hidden": c.hidden,
            "num": c.num,
        }
        for c in COLUMNS
    ]
    return {
        "columns": columns,
        "hidden_default": " ".join(c.key for c in COLUMNS if c.hidden),
        "p_choices": P_CHOICES,
        "q": q,
        "data": data,
        "meta": data["meta"],
        "table": table,
        "hardware_targets": list(HardwareTarget.objects.all()),
        "sets": shown_sets(data["meta"]["set_sizes"], q.wset),
        "sorts": SORTS,
        "budgets": BUDGET_CHOICES,
        "selections": list(SELECTION_LABELS.items()),
        "figures": figures,
        "published": [r for r in PUBLISHED_RESULTS if r["status"] == REPORTED_NOT_EVALUATED],
        "permalink": "?" + q.qs(),
        "set_tabs": [
            (key, label, "?" + q.qs(set=key)) for key, label in shown_sets(data["meta"]["set_sizes"], q.wset).items()
        ],
        "sort_links": {key: "?" + q.sort_qs(key) for key in SORTS},
        "export_csv": "?" + q.qs(format="csv"),
        "export_json": "?" + q.qs(format="json"),
        "current_versions_link": "?" + q.qs(versions=""),
        "HARNESS_VERSION": current_harness_version(),  # rendered without a request (cached)
    }


def leaderboard(request):
    q = Query.from_params(request.GET)
    if q is None:
        raise Http404("no hardware target is configured")
    fmt = wants_export(request)
    if fmt:
        data = leaderboard_data(q)
        rows = (
            [dict(r, section="ranked") for r in data["rows"]]
            + [
                dict(
                    r,
                    section="reference",
                    provenance="reference",
                    hardware=q.hardware.slug,
                    workload_set=q.wset,
                    budget=data["meta"]["budget"],
                )
                for r in data["references"]
            ]
            + [dict(r, section="self-reported") for r in data["self_reported"]]
            + [dict(r, section="in-progress") for r in data["in_progress"]]
        )
        meta = dict(
            data["meta"],
            jax_versions=", ".join(data["meta"]["jax_versions"]),
            harness_versions=", ".join(data["meta"]["harness_versions"]),
        )
        meta.pop("query", None)
        meta.pop("version_options", None)  # the page's menu
        return export_response(
            fmt,
            f"leaderboard-{q.hardware.slug}-{q.wset}-{data['meta']['budget']}",
            meta,
            rows,
            EXPORT_COLUMNS,
            extra={"published_results": PUBLISHED_RESULTS, "query": data["meta"]["query"]},
        )
    # The board (everything but the user's menu) is the same for every visitor: render it once
    # per data stamp.
    stamp = visibility_stamp(q.hardware)
    key = cache_key("board", q.hardware.pk, q.qs(), stamp)
    cached = cache.get(key)
    if cached is None:
        data = leaderboard_data(q, stamp=stamp)
        figures = build_figures(q, data) if data["rows"] else []
        ctx = board_context(q, data, figures)
        cached = {
            "html": render_to_string("leaderboard/_board.html", ctx),
            "has_figures": bool(figures),
            "rows": data["rows"],
        }
        cache.set(key, cached, CACHE_SECONDS)
    # the signed-in user's own test runs, placed on this board: theirs alone, outside the cache
    previews = test_run_preview.for_board(request.user, q, cached["rows"])
    return render(
        request,
        "leaderboard/leaderboard.html",
        {
            "q": q,
            "board": mark_safe(cached["html"]),
            "has_figures": cached["has_figures"],
            "rows": cached["rows"],
            "previews": previews,
        },
    )
