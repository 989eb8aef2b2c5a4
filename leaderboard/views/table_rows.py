"""Table rows built in Python for the long tables of the board and submission pages (hundreds
of rows): the template engine and ``format_html`` cost more per cell than the data they show.
Every value goes through ``esc``, which escapes exactly as the templates do."""

from __future__ import annotations

import html

from django.utils.safestring import SafeString, mark_safe

from leaderboard.templatetags.leaderboard_extras import outcome_label


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
