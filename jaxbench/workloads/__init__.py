"""The registry of the JAXBench workloads: level 1 (the public suite's 50) and later levels.

Every module named ``wNN<letter>_*.py`` in this package defines one ``WORKLOAD``; they are found
by name so that adding a workload touches one file only (docs/WORKLOADS.md, "Adding a workload").
``JAXBENCH_EXTRA_WORKLOADS`` (comma-separated dotted module names) registers modules defined
elsewhere the same way: the tests define a level-2 workload so, and every process of a run (web,
worker, harness) must see the same value.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from .. import environment
from . import names
from .base import Workload

_MODULE_RE = re.compile(r"^(?:l\d_)?w\d{2,3}[a-z]_\w+$")  # l2_w08p_gemm.py: level 2's twin of 8p
EXTRA_ENV = "JAXBENCH_EXTRA_WORKLOADS"
_REGISTRY: dict[str, Workload] | None = None


def _load() -> dict[str, Workload]:
    global _REGISTRY
    if _REGISTRY is None:
        found = []
        for info in pkgutil.iter_modules(__path__):
            if _MODULE_RE.match(info.name):
                mod = importlib.import_module(f"{__name__}.{info.name}")
                found.append(mod.WORKLOAD)
        for dotted in environment.get(EXTRA_ENV):
            found.append(importlib.import_module(dotted).WORKLOAD)
        found.sort(key=lambda w: w.order)
        ids = [w.id for w in found]
        numbers = [w.order for w in found]
        if len(set(ids)) != len(ids) or len(set(numbers)) != len(numbers):
            raise RuntimeError(f"duplicate workload ids or numbers within a level: {ids}")
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


def of_level(level: int) -> list[Workload]:
    return [w for w in _load().values() if w.level == level]


def reload() -> None:
    """Forget the loaded registry (after ``JAXBENCH_EXTRA_WORKLOADS`` changed: tests only)."""
    global _REGISTRY
    _REGISTRY = None
