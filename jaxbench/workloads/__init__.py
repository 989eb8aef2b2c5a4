"""The registry of the 50 JAXBench workloads.

Every module named ``wNN[pk]_*.py`` in this package defines one ``WORKLOAD``; they are found
by name so that adding a workload touches one file only.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from . import names
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


def get(name: str) -> Workload:
    """Look a workload up by any name :func:`.names.resolve` accepts (ID, slug, public folder
    name, with or without ``.py``)."""
    reg = _load()
    wid = names.resolve(name, {w.id: (w.slug, w.public_name) for w in reg.values()})
    if wid is None:
        raise KeyError(f"unknown workload {name!r}: {names.HINT}")
    return reg[wid]


def ids() -> list[str]:
    return list(_load())
