"""Workload names in a trace, resolved by the one naming rule (jaxbench.workloads.names)."""

from __future__ import annotations

from collections.abc import Iterable

from jaxbench.workloads import names

# -- workload names ------------------------------------------------------------------------


class WorkloadCatalog:
    """Resolves a workload name to its ID by :func:`jaxbench.workloads.names.resolve` (the one
    rule), over ``entries``: ``(id, slug, public_name)`` triples. Without entries
    (``offline()``) only the ID part is checked: production workloads are 1p-17p, KernelBench
    ones 18k-50k."""

    def __init__(self, entries: Iterable[tuple[str, str, str]] | None):
        self.offline_mode = entries is None
        self._entries = {wid: (slug, public) for wid, slug, public in (entries or ())}
        self._cache: dict[str, str | None] = {}

    @classmethod
    def offline(cls) -> WorkloadCatalog:
        return cls(None)

    def __len__(self) -> int:
        return len(self._entries)

    def resolve(self, name: str) -> str | None:
        if name in self._cache:
            return self._cache[name]
        wid = names.resolve(name, None if self.offline_mode else self._entries)
        if len(self._cache) < 10_000:
            self._cache[name] = wid
        return wid

    def hint(self) -> str:
        return names.HINT
