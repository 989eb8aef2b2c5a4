"""The workload sets a leaderboard aggregates over (DESIGN.md, "Metrics"): all 50, the 17
production operators, the 33 KernelBench ones and the 8 with expert kernels.

The one definition: the leaderboard's tabs and labels, the aggregate rows' columns, the
filters over the catalog and the registry's membership all come from :data:`SETS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True)
class WorkloadSet:
    name: str
    label: str
    source: str | None = None  # members come from this source only
    expert: bool | None = None  # members have (True) an expert kernel

    def filters(self) -> dict[str, object]:
        """The attribute values a member must have (also usable as ORM filter keywords)."""
        out: dict[str, object] = {}
        if self.source is not None:
            out["source"] = self.source
        if self.expert is not None:
            out["expert"] = self.expert
        return out

    def contains(self, source: str, expert: bool) -> bool:
        return (self.source is None or source == self.source) and (self.expert is None or bool(expert) == self.expert)


SETS: tuple[WorkloadSet, ...] = (
    WorkloadSet("all", "All 50"),
    WorkloadSet("production", "Production 17", source="maxtext"),
    WorkloadSet("kernelbench", "KernelBench 33", source="kernelbench-l2"),
    WorkloadSet("expert", "Expert 8", expert=True),
)
SET_NAMES: tuple[str, ...] = tuple(s.name for s in SETS)
SET_LABELS: dict[str, str] = {s.name: s.label for s in SETS}
SET_FILTERS: dict[str, dict[str, object]] = {s.name: s.filters() for s in SETS}


def sets_of(source: str, expert: bool) -> tuple[str, ...]:
    """The names of the sets a workload with this source and expert flag belongs to."""
    return tuple(s.name for s in SETS if s.contains(source, expert))


def sizes(members: Iterable[tuple[str, bool]]) -> dict[str, int]:
    """|W| of every set over ``(source, expert)`` pairs."""
    out = dict.fromkeys(SET_NAMES, 0)
    for source, expert in members:
        for name in sets_of(source, expert):
            out[name] += 1
    return out
