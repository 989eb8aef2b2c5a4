"""Workloads found by name in the catalogue, with the harness's one naming rule
(:func:`jaxbench.workloads.names.resolve`): an ID, a slug or a public folder name."""

from __future__ import annotations

from catalog.models import Workload
from jaxbench.traces import WorkloadCatalog


def workload_catalog() -> WorkloadCatalog:
    """The names of the workloads the portal knows (synced from the registry)."""
    return WorkloadCatalog(Workload.objects.values_list("wid", "slug", "public_name"))


def find_workload(name: str) -> Workload | None:
    """The catalogue's workload ``name`` denotes, or None."""
    wid = workload_catalog().resolve(name)
    return Workload.objects.filter(wid=wid).first() if wid else None
