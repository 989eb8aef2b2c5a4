"""The registry of the 50 JAXBench workloads.

Every module named ``wNN[pk]_*.py`` in this package defines one ``WORKLOAD``; they are found
by name so that adding a workload touches one file only.
"""
from __future__ import annotations

import importlib
import pkgutil
import re

from .base import Workload

_MODULE_RE = re.compile(r"^w\d\d[pk]_\w+$")
_REGISTRY: dict[str, Workload] | None = None


def _load() -> dict[str, Workload]:
    global _REGISTRY
    if _REGISTRY is None:
        found = []
        for info in pkgutil.iter_modules(__path__):
            if _MODULE_RE.match(info.name):
                mod = importlib.import_module(f"{__name__}.{info.name}")
                found.append(mod.WORKLOAD)
        found.sort(key=lambda w: w.number)
        ids = [w.id for w in found]
        if len(set(ids)) != len(ids):
            raise RuntimeError(f"duplicate workload ids: {ids}")
        _REGISTRY = {w.id: w for w in found}
    return _REGISTRY


def all_workloads() -> list[Workload]:
    return list(_load().values())


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def get(name: str) -> Workload:
    """Look a workload up by ID (``12p``), slug (``12p-rmsnorm``), the public suite's folder
    name (``12p_RMSNorm``) or a file name made from any of them (``12p_RMSNorm.py``)."""
    reg = _load()
    raw = name.strip()
    if raw.endswith(".py"):
        raw = raw[:-3]
    m = re.match(r"^0*(\d{1,2}[pkPK])(?:$|[-_])", raw)
    if m and m.group(1).lower() in reg:
        wl = reg[m.group(1).lower()]
        rest = raw[len(m.group(0)):]
        # "12p" alone, or followed by a name that is this workload's own
        if not rest or _norm(rest) in (_norm(wl.slug[len(wl.id):]), _norm(wl.public_name[len(wl.id):])):
            return wl
    raise KeyError(f"unknown workload {name!r}: use an ID such as 12p, a slug such as "
                   f"12p-rmsnorm, or a public folder name such as 12p_RMSNorm")


def ids() -> list[str]:
    return list(_load())
