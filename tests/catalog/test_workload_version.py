"""The workload version and content hash reach the catalogue, the workload page and the API."""

import pytest

from catalog.models import Workload
from catalog.registry_sync import sync_workloads
from jaxbench import workloads as registry
from tests import factories

pytestmark = pytest.mark.django_db


def test_sync_mirrors_version_and_hash_and_follows_a_bump(monkeypatch):
    factories.workload("8p")
    row = Workload.objects.get(wid="8p")
    wl = registry.get("8p")
    assert (row.version, row.content_hash) == (1, wl.content_hash) and len(row.content_hash) == 16
    # a bumped registry entry is mirrored by the next sync
    import dataclasses

    bumped = dataclasses.replace(wl, version=2, atol=2e-2, tolerance_reason="test")
    monkeypatch.setattr(registry, "all_workloads", lambda: [bumped])
    sync_workloads()
    row.refresh_from_db()
    assert (row.version, row.content_hash) == (2, bumped.content_hash) != (1, wl.content_hash)


def test_workload_page_and_api_show_the_version(client):
    w = factories.workload("8p")
    html = client.get(f"/workloads/{w.slug}/").content.decode()
    assert "Version <strong>1</strong>" in html and w.content_hash in html
    d = client.get("/api/v1/workloads/8p/").json()
    assert d["version"] == 1 and d["content_hash"] == registry.get("8p").content_hash
    listed = client.get("/api/v1/workloads/").json()["results"]
    assert [x["version"] for x in listed] == [1] and "content_hash" not in listed[0]
