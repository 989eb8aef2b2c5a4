"""Syntax-highlighted kernel and reference sources for the pages.

Keyed by the source text (or its digest), so an entry never goes stale: a data change (a
finished evaluation, a new summary) changes which sources a page shows, never what a source
looks like. That is why a per-process LRU is safe to keep across the pages' own cache
invalidations. The kernels a submission page shows are also highlighted ahead, by the worker and
at intake (``store``, ``models.HighlightedSource``; which ones: ``leaderboard.shown_sources``),
and read back in one query (``highlighted_many``): a page of 50 real kernels costs a visitor no
highlighting at all, also on a worker's first view after a restart."""

from __future__ import annotations

import functools
from collections.abc import Iterable

import pygments
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from leaderboard.models import HighlightedSource

# Building a lexer and a formatter costs more than highlighting a short kernel; both are
# stateless between calls.
_LEXER = PythonLexer()
_FORMATTER = HtmlFormatter(cssclass="highlight")
STYLE_DEFS = HtmlFormatter().get_style_defs(".highlight")
# Stored HTML of another Pygments may use other classes than STYLE_DEFS styles: not read.
RENDERER = f"pygments {pygments.__version__}"


@functools.lru_cache(maxsize=1024)
def highlighted(code: str) -> str:
    return highlight(code, _LEXER, _FORMATTER)


def highlighted_many(sources: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{digest: html} for ``(code_sha256, code)`` pairs: the stored HTML (one query), the rest
    highlighted here."""
    sources = list(sources)
    stored = dict(
        HighlightedSource.objects.filter(code_sha256__in={sha for sha, _ in sources}, renderer=RENDERER).values_list(
            "code_sha256", "html"
        )
    )
    return {sha: stored.get(sha) or highlighted(code) for sha, code in sources}


def store(sources: Iterable[tuple[str, str]]) -> int:
    """Highlight and keep ``(code_sha256, code)`` pairs not stored yet; the number written. Safe
    beside another writer of the same source: a row written meanwhile is overwritten with the
    same HTML."""
    wanted = dict(sources)
    if not wanted:
        return 0
    have = set(
        HighlightedSource.objects.filter(code_sha256__in=set(wanted), renderer=RENDERER).values_list(
            "code_sha256", flat=True
        )
    )
    rows = [
        HighlightedSource(code_sha256=sha, renderer=RENDERER, html=highlighted(code))
        for sha, code in wanted.items()
        if sha not in have
    ]
    # a row of another renderer is replaced, not kept beside: the digest is the key
    HighlightedSource.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["code_sha256"], update_fields=["renderer", "html"]
    )
    return len(rows)
