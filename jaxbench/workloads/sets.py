"""The workload sets a leaderboard aggregates over (DESIGN.md, "Metrics"): level 1 (the public
suite's 50: "all"), its 17 production operators, 33 KernelBench ones and 8 with expert kernels;
and level 2 (later workloads, ranked apart: a level never changes another level's geomeans).

The one definition: the leaderboard's tabs and labels, the aggregate rows' columns, the
filters over the catalog and the registry's membership all come from :data:`SETS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any


@dataclasses.dataclass(frozen=True)
class WorkloadSet:
    name: str
    label: str
    source: str | None = None  # members come from this source only
    expert: bool | None = None  # members have (True) an expert kernel
    level: int = 1  # members belong to this level (base.LEVELS)

    def filters(self) -> dict[str, object]:
        """The attribute values a member must have (also usable as ORM filter keywords)."""
        out: dict[str, object] = {"level": self.level}
        if self.source is not None:
            out["source"] = self.source
        if self.expert is not None:
            out["expert"] = self.expert
        return out

    def contains(self, source: str, expert: bool, level: int = 1) -> bool:
        return (
            level == self.level
            and (self.source is None or source == self.source)
            and (self.expert is None or bool(expert) == self.expert)
        )


SETS: tuple[WorkloadSet, ...] = (
    WorkloadSet("all", "All 50"),
    WorkloadSet("production", "Production 17", source="maxtext"),
    WorkloadSet("kernelbench", "KernelBench 33", source="kernelbench-l2"),
    WorkloadSet("expert", "Expert 8", expert=True),
    WorkloadSet("level2", "Level 2", level=2),
)
SET_NAMES: tuple[str, ...] = tuple(s.name for s in SETS)
SET_LABELS: dict[str, str] = {s.name: s.label for s in SETS}
SET_FILTERS: dict[str, dict[str, object]] = {s.name: s.filters() for s in SETS}
SET_LEVELS: dict[str, int] = {s.name: s.level for s in SETS}


def baseline_of(name: str) -> str:
    """What a set's speedups are over, as its board says it: "XLA" on level 1; on a later level
    "the baseline" (each workload's own: a hand-tuned Pallas kernel where it declares one, else
    XLA; the workload page says which)."""
    return "XLA" if SET_LEVELS[name] == 1 else "the baseline"


def sets_of(source: str, expert: bool, level: int = 1) -> tuple[str, ...]:
    """The names of the sets a workload with this source, expert flag and level belongs to."""
    return tuple(s.name for s in SETS if s.contains(source, expert, level))


def sizes(members: Iterable[tuple[Any, ...]]) -> dict[str, int]:
    """|W| of every set over ``(source, expert[, level])`` tuples."""
    out = dict.fromkeys(SET_NAMES, 0)
    for member in members:
        for name in sets_of(*member):
            out[name] += 1
    return out
