"""The one rule that turns a workload's name into its ID.

Accepted: the ID (``12p``, also ``012P``), the slug (``12p-rmsnorm``), the public suite's folder
name (``12p_RMSNorm``), each with or without ``.py``. A later level's twin of a level-1 task (the
public suite's level 2 reuses 1p-11p) is named with its level: ``l2-8p``, ``l2-8p-gemm``, or the
public path ``level2/8p_GEMM``; ``8p`` alone is level 1's. The registry, the trace format, the client
and every page resolve names through :func:`resolve`, so a name means the same everywhere.
No JAX here: the trace format and the client use it without loading a workload.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .base import ID_LETTERS, LEVEL_ONE_SIZE

HINT = "use an ID such as 12p, a slug such as 12p-rmsnorm, or a public folder name such as 12p_RMSNorm"

_ID_RE = re.compile(r"^(?:l(?:evel)?[-_]?([2-9])[-_/])?0*(\d{1,3})([a-zA-Z])(?:$|[-_])", re.IGNORECASE)
# the public suite's numbering: production workloads 1p-17p, KernelBench ones 18k-50k (level 1);
# later levels number on from 51, their letter naming the source (base.ID_LETTERS)
_PRODUCTION = range(1, 18)
_KERNELBENCH = range(18, LEVEL_ONE_SIZE + 1)
_LATER_LEVELS = range(LEVEL_ONE_SIZE + 1, 1000)
_LATER_LETTERS = "".join(v for k, v in ID_LETTERS.items() if k not in ("maxtext", "kernelbench-l2"))


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def resolve(name: str, entries: Mapping[str, tuple[str, str]] | None) -> str | None:
    """The workload ID ``name`` denotes, or None.

    ``entries`` maps each known ID to its ``(slug, public_name)``. Without entries (``None``:
    offline, no catalog at hand) only the ID part is checked against the suite's numbering."""
    raw = name.strip()
    if raw.endswith(".py"):
        raw = raw[:-3]
    m = _ID_RE.match(raw)
    if not m:
        return None
    level, number, letter = m.group(1), int(m.group(2)), m.group(3).lower()
    bare = f"{number}{letter}"
    # a level named with a level-1 number is that level's twin; a later number carries no level
    wid = f"l{level}-{bare}" if level and number <= LEVEL_ONE_SIZE else bare
    rest = raw[len(m.group(0)) :]
    if entries is None:
        ok = (
            (number in _PRODUCTION and letter == "p")
            or (number in _KERNELBENCH and letter == "k")
            or (number in _LATER_LEVELS and letter in _LATER_LETTERS)
        )
        return wid if ok else None
    if wid not in entries:
        return None
    slug, public = entries[wid]
    # the ID alone, or followed by a name that is this workload's own
    if not rest or _norm(rest) in (_norm(slug[len(wid) :]), _norm(public[len(bare) :])):
        return wid
    return None
