"""Table rows built in Python for the long tables of the board and submission pages (hundreds
of rows): the template engine and ``format_html`` cost more per cell than the data they show.
Every value goes through ``esc``, which escapes exactly as the templates do."""

from __future__ import annotations

import html

from django.utils.safestring import SafeString, mark_safe

from leaderboard.templatetags.leaderboard_extras import outcome_label, pct, speedup_interval, time_spread, x


def esc(value) -> str:
    """Escaped like Django's ``conditional_escape`` (a safe string passes as it is)."""
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return html.escape(str(value))


def failure_rows(failures: list[dict]) -> SafeString:
    """The rows of the submission page's failed-samples table (``failed_samples``)."""
    out = []
    for f in failures:
        wid, index, outcome, head, message = esc(f["wid"]), esc(f["index"]), esc(f["outcome"]), f["head"], f["message"]
        filename = f' <span class="mono muted">{esc(f["filename"])}</span>' if f["filename"] else ""
        category = f' <span class="muted">{esc(f["category"])}</span>' if f["category"] else ""
        precheck = ' <span class="muted">(pre-check)</span>' if f["precheck"] else ""
        where = "".join(f'<div class="mono muted failure-where">at {esc(w)}</div>' for w in f["where"])
        full = (
            f'<details><summary>full message</summary><pre class="mono">{esc(message)}</pre></details>'
            if message != head
            else ""
        )
        out.append(
            f'<tr id="failure-{wid}-{index}" data-workload="{wid}" data-index="{index}">\n'
            f'  <td><a href="?workload={wid}&amp;sample={index}#sample-{index}">{wid} #{index}</a>{filename}</td>\n'
            f'  <td><span class="badge {outcome}" title="{esc(outcome_label(f["outcome"]))}">{outcome}</span>'
            f"{category}{precheck}</td>\n"
            f'  <td class="small"><pre class="mono failure-head">{esc(head)}</pre>{where}{full}</td>\n'
            "</tr>"
        )
    return mark_safe("".join(out))


def workload_table_rows(rows: list[dict], trace: bool) -> SafeString:
    """The rows of the submission page's per-workload table (``workload_rows``; ``trace``: a
    link to each workload's samples; the best sample's time ± spread where ``mark_outside_pallas``
    put it)."""
    if not rows:
        return mark_safe('<tr><td colspan="12" class="muted">No candidate yet.</td></tr>')
    out = []
    for r in rows:
        wid, outcome = esc(r["wid"]), esc(r["outcome"])
        expert = ' <span class="badge ok">expert</span>' if r["expert_workload"] else ""
        ties = (
            ' <span class="muted" title="correct samples within noise of XLA (never counted faster)">'
            f"· {esc(r['n_tie'])} tie{'' if r['n_tie'] == 1 else 's'}</span>"
            if r["n_tie"]
            else ""
        )
        outside = ""
        if r["outside_pallas"]:
            where = f"; largest outside: {esc(r['outside_pallas_where'])}" if r["outside_pallas_where"] else ""
            outside = f' title="share of FLOPs outside Pallas: {esc(r["outside_pallas"])}{where}"'
        first_correct = "" if r["first_correct_index"] is None else esc(r["first_correct_index"])
        first_faster = "" if r["first_faster_index"] is None else esc(r["first_faster_index"])
        samples = f'<td><a href="?workload={wid}">samples</a></td>' if trace else ""
        out.append(
            f'<tr data-workload="{wid}">\n'
            f'  <td><a href="/workloads/{esc(r["slug"])}/">{wid}</a> {esc(r["title"])}{expert}</td>\n'
            f'  <td><span class="badge {outcome}" title="{esc(outcome_label(r["outcome"]))}">{outcome}</span></td>\n'
            f'  <td class="num">{esc(r["n_correct"])}/{esc(r["n_samples"])}{ties}</td>\n'
            f'  <td class="num"><strong>{esc(x(r["best_speedup"]))}</strong></td>\n'
            f'  <td class="num muted">{esc(speedup_interval(r))}</td>\n'
            f'  <td class="num">{esc(time_spread(r.get("median_s"), r.get("spread")))}</td>\n'
            f'  <td class="num">{first_correct}</td>\n'
            f'  <td class="num">{first_faster}</td>\n'
            f'  <td class="num">{esc(x(r["expert_speedup"]))}</td>\n'
            f'  <td class="num">{esc(pct(r["gap"], 0))}</td>\n'
            f'  <td class="num"{outside}>{esc(r["outside_pallas"])}</td>\n'
            f"  {samples}\n"
            "</tr>"
        )
    return mark_safe("".join(out))
