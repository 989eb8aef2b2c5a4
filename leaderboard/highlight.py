"""Syntax-highlighted kernel and reference sources for the pages.

Keyed by the source text itself, so an entry never goes stale: a data change (a finished
evaluation, a new summary) changes which sources a page shows, never what a source looks like.
That is why a per-process LRU is safe to keep across the pages' own cache invalidations, and it
spares the cache server one round trip per source (a submission page shows up to 100)."""

from __future__ import annotations

import functools

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

# Building a lexer and a formatter costs more than highlighting a short kernel; both are
# stateless between calls.
_LEXER = PythonLexer()
_FORMATTER = HtmlFormatter(cssclass="highlight")
STYLE_DEFS = HtmlFormatter().get_style_defs(".highlight")


@functools.lru_cache(maxsize=1024)
def highlighted(code: str) -> str:
    return highlight(code, _LEXER, _FORMATTER)
