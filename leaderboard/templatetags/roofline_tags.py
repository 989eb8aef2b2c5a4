""" "x% of limit" beside a measured time (``jaxbench/metrics/roofline.py``), with the peaks used and
their source as its tooltip; nothing where the target's peaks are unknown."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from jaxbench.metrics import roofline

register = template.Library()


@register.filter
def limit_span(label) -> SafeString:
    """A ``roofline.label`` dict as `` <span class="of-limit" title="...">16% of limit</span>``
    (a leading space, no break inside the figure); "" for None."""
    if not label:
        return mark_safe("")
    return format_html(
        ' <span class="of-limit muted small" title="{}">{}</span>', label["title"], label["text"].replace(" ", "\u00a0")
    )


@register.filter
def of_limit(seconds, roof) -> SafeString:
    """``{{ seconds|of_limit:roof }}``: :func:`limit_span` of a time on a ``roofline.Roofline``."""
    return limit_span(roofline.label(roof, seconds))
