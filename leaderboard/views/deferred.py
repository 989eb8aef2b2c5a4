"""The columns a list of evaluations never shows, deferred so that no row reads nor parses them:
a candidate's source and its workload's descriptions, sources, shapes and audits (the JSON of
every related workload was parsed again for every row: half the time of a page of them)."""

from __future__ import annotations

WORKLOAD_DETAIL_FIELDS = (
    "description",
    "notes",
    "reference_source",
    "starter_source",
    "shapes",
    "profiles",
    "configurations",
    "upstream",
    "deviations",
    "null_audit",
)


def unlisted(candidate: str = "candidate") -> tuple[str, ...]:
    """``defer()`` arguments for evaluations with ``select_related`` of ``candidate``'s workload."""
    return (f"{candidate}__code", *(f"{candidate}__workload__{f}" for f in WORKLOAD_DETAIL_FIELDS))
