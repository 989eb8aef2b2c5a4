"""Number formatting for the leaderboard templates."""

import json
import math

from django import template
from django.core.serializers.json import DjangoJSONEncoder
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from jaxbench.record import OUTCOME_LABELS, format_interval
from jaxbench.traces import SELECTION_HELP, SELECTION_LABELS, UNDECLARED
from jaxbench.verdict.review import HELD_LABEL, HELD_OUTCOME

register = template.Library()


def _finite(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


@register.filter
def x(value, digits=2):
    """1.2345 -> '1.23x'; blank for None."""
    f = _finite(value)
    return "" if f is None else f"{f:.{int(digits)}f}x"


@register.filter
def pct(value, digits=1):
    """0.373 -> '37.3%'; blank for None."""
    f = _finite(value)
    return "" if f is None else f"{100 * f:.{int(digits)}f}%"


@register.filter
def num(value, digits=2):
    """Integers stay integers (13), expected counts keep decimals (12.84)."""
    f = _finite(value)
    if f is None:
        return ""
    return str(int(round(f))) if abs(f - round(f)) < 1e-9 else f"{f:.{int(digits)}f}"


@register.filter
def big(value):
    """12345678 -> '12.3M'."""
    f = _finite(value)
    if f is None:
        return ""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(f) >= scale:
            return f"{f / scale:.1f}{unit}"
    return f"{f:.0f}" if f == int(f) else f"{f:.2f}"


@register.filter
def interval(row, prefix="geomean"):
    """'[1.10, 1.25]' from row[prefix_low] / row[prefix_high]."""
    lo, hi = _finite(row.get(f"{prefix}_low")), row.get(f"{prefix}_high")
    hi = _finite(hi) if hi is not None else None
    if lo is None or hi is None:
        return ""
    return format_interval(lo, hi)


BEFORE_INTERVALS_TITLE = (
    "timed before speedups had 95% intervals: the point speedup alone, classified "
    "faster or slower by it; a tie cannot be told"
)


def _field(row, name):
    return row.get(name) if hasattr(row, "get") else getattr(row, name, None)


@register.filter
def speedup_interval(row, prefix="best"):
    """The interval cell of a best sample: '[1.37, 1.48]' from row[prefix_low/high], or the
    'timed before intervals' tag when row[prefix_before_intervals] (its low/high are then the
    old timing spread, not a 95% interval); blank without a speedup."""
    if _field(row, f"{prefix}_before_intervals"):
        return before_intervals_tag()
    lo, hi = _finite(_field(row, f"{prefix}_low")), _finite(_field(row, f"{prefix}_high"))
    if lo is None or hi is None:
        return ""
    return format_interval(lo, hi)


@register.simple_tag
def before_intervals_tag():
    """The small tag of a correct result timed before intervals existed."""
    return format_html('<span class="tag-legacy" title="{}">timed before intervals</span>', BEFORE_INTERVALS_TITLE)


@register.filter
def outcome_label(outcome):
    """'correct_tie' -> 'correct, within noise' (the label pages, exports and the CLI share)."""
    if outcome == HELD_OUTCOME:
        return HELD_LABEL
    return OUTCOME_LABELS.get(outcome, outcome or "")


@register.filter
def get(mapping, key):
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def seconds(value):
    f = _finite(value)
    if f is None:
        return ""
    if f >= 3600:
        return f"{f / 3600:.1f} h"
    if f >= 60:
        return f"{f / 60:.1f} min"
    return f"{f:.0f} s"


@register.filter
def ms(value):
    f = _finite(value)
    return "" if f is None else f"{f * 1e3:.3f} ms"


TIME_SPREAD_TITLE = (
    "median of the timed iterations ± half the spread between their 10th and 90th percentiles "
    "(the record's timing spread, (p90 - p10) / median)"
)


def time_spread_text(median_s, spread) -> str:
    """'1.230 ms ± 4%': a median time (as the ``ms`` filter writes it, like every time on the
    pages) and half its relative p10-p90 spread (a record's timing ``spread`` is (p90 - p10) /
    median); the time alone without a spread, blank without a time."""
    t = ms(median_s)
    s = _finite(spread)
    if not t or s is None or s < 0:
        return t
    half = 50 * s
    return f"{t} ± {half:.1f}%" if 0 < half < 1 else f"{t} ± {half:.0f}%"


@register.filter
def time_spread(median_s, spread=None):
    """``{{ r.median_s|time_spread:r.spread }}``: the plain time ± spread beside a verdict, as a
    span whose title says what the ± is; blank without a time."""
    text = time_spread_text(median_s, spread)
    if not text:
        return ""
    time, _, pm = text.partition(" ± ")
    if not pm:
        return format_html('<span class="time-spread" title="{}">{}</span>', TIME_SPREAD_TITLE, time)
    return format_html(
        '<span class="time-spread" title="{}">{} <span class="spread">± {}</span></span>', TIME_SPREAD_TITLE, time, pm
    )


@register.filter
def get_item_at(seq, i):
    try:
        return seq[int(i)]
    except (IndexError, TypeError, ValueError):
        return ""


@register.simple_tag
def selection_badge(selection: str | None, selector: str | None = "") -> str:
    """How an entry's samples were chosen, as its upload declared (docs: /docs/#selection)."""
    selection = selection or UNDECLARED
    title = SELECTION_HELP.get(selection, "") + (f"; selector: {selector}" if selector else "")
    return format_html(
        ' <a class="badge selection {}" href="/docs/#selection" title="{}">{}</a>',
        selection,
        title,
        SELECTION_LABELS.get(selection, selection),
    )


@register.filter
def figure_script(value, element_id):
    """``json_script`` for the (large) chart figures, byte for byte: the same three characters
    escaped with ``str.replace``, several times faster than ``json_script``'s ``str.translate``
    over a figure of 100 KB."""
    text = json.dumps(value, cls=DjangoJSONEncoder)
    text = text.replace("<", "\\u003C").replace(">", "\\u003E").replace("&", "\\u0026")
    return format_html('<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text))
