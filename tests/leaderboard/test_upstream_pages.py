"""Upstream tracking and the null-kernel audit in the open: the catalogue mirrors them
(sync_registry), the workload page shows the public file at its commit, the date and the
deviations, the workloads list has a "Null kernels" column with the public check beside ours,
the API's workload detail returns them, and /docs/ explains both under its own anchors."""

import dataclasses
import re

import pytest

from catalog.models import Workload
from catalog.registry_sync import sync_workloads
from jaxbench import workloads as registry
from jaxbench.workloads import null_audit
from tests import factories

pytestmark = pytest.mark.django_db


def _section(html, anchor):
    m = re.search(rf'<section class="card" id="{anchor}">(.*?)</section>', html, re.S)
    assert m, f"no section #{anchor}"
    return m.group(1)


def test_sync_mirrors_upstream_deviations_and_the_audit():
    row = factories.workload("38k")
    wl = registry.get("38k")
    assert row.upstream["commit"] == wl.upstream.commit and row.upstream["url"] == wl.upstream.url
    assert row.upstream["date"] == wl.upstream.date and row.upstream["file"] == wl.upstream.file
    assert [d["kind"] for d in row.deviations] == ["tolerance", "inputs"]
    assert row.deviations[0]["why"] == wl.tolerance_reason
    assert row.null_audit["content_hash"] == wl.content_hash and row.null_audit["current"] is True
    assert row.null_audit["ours"] == null_audit.load()["workloads"]["38k"]["ours"]


def test_a_version_bump_marks_the_audit_stale(monkeypatch):
    factories.workload("12p")
    bumped = dataclasses.replace(registry.get("12p"), version=2, atol=2e-2, tolerance_reason="test")
    monkeypatch.setattr(registry, "all_workloads", lambda: [bumped])
    sync_workloads()
    row = Workload.objects.get(wid="12p")
    assert row.null_audit["current"] is False and row.null_audit["content_hash"] != bumped.content_hash


def test_workload_page_shows_the_public_file_at_its_commit_and_the_deviations(client):
    w = factories.workload("38k")
    up = registry.get("38k").upstream
    html = client.get(f"/workloads/{w.slug}/").content.decode()
    sec = _section(html, "upstream")
    link = f'href="https://github.com/AI-Hypercomputer/accelerator-agents/blob/{up.commit}/{up.file}"'
    assert link in sec and up.file in sec and up.commit[:7] in sec and up.date in sec
    assert f"/commit/{up.commit}" in sec and "/commits/main/" in sec
    table = re.search(r'<table id="deviations">(.*?)</table>', sec, re.S).group(1)
    assert table.count("<tr data-kind=") == 2 and 'data-kind="tolerance"' in table and 'data-kind="inputs"' in table
    assert "atol 1e-4, rtol 6e-2" in table and "A 0.02 shift of a logit is invisible" in table


def test_a_workload_without_deviations_says_so(client):
    w = factories.workload("12p")
    sec = _section(client.get(f"/workloads/{w.slug}/").content.decode(), "upstream")
    assert 'id="no-deviations"' in sec and 'id="deviations"' not in sec


def test_workload_page_shows_the_null_kernels_ours_and_upstream(client):
    w = factories.workload("6p")
    sec = _section(client.get(f"/workloads/{w.slug}/").content.decode(), "null-kernels")
    assert "all 4 fail" in sec and "zeros, a constant, the mean pass upstream" in sec
    assert re.search(r'data-kernel="zeros"><td>zeros</td><td class="">fails, [\d.]+× its allowance</td>', sec)
    assert re.search(r'<td class="warn"[^>]*>passes, max \|diff\| [\d.e-]+', sec), "the public zeros pass"
    assert "full sizes" in sec
    # an input of another shape: n/a
    assert re.search(r'data-kernel="input:k_pages"><td>k_pages passed through</td><td class="" title="its shape', sec)


def test_public_file_failing_upstream_is_shown_with_its_reason(client):
    w = factories.workload("11p")
    sec = _section(client.get(f"/workloads/{w.slug}/").content.decode(), "null-kernels")
    assert "baseline fails upstream" in sec and "fails in its own harness" in sec


def test_a_level_two_workload_has_no_public_file(client, level2):
    w = factories.workload("51d")
    html = client.get(f"/workloads/{w.slug}/").content.decode()
    assert "No public suite file" in _section(html, "upstream") and 'id="null-kernels"' not in html


def test_the_workloads_list_has_a_null_kernels_column(client):
    for wid in ("12p", "6p", "25k", "11p"):
        factories.workload(wid)
    html = client.get("/workloads/").content.decode()
    assert '<a href="/docs/#null-kernels">Null kernels</a>' in html

    def cell(wid):
        row = re.search(rf'<tr data-workload="{wid}">(.*?)</tr>', html, re.S).group(1)
        return re.search(r'<td class="null-kernels">(.*?)</td>', row, re.S).group(1)

    assert ">all 4 fail</a>" in cell("12p") and "none pass upstream" in cell("12p")
    assert 'title="zeros: fails, ' in cell("12p")  # the tooltip, per null kernel
    assert ">all 4 fail</a>" in cell("6p") and "zeros, a constant, the mean pass upstream" in cell("6p")
    assert "upstream-passes" in cell("6p") and "upstream-passes" not in cell("12p")
    assert ">the mean passes</a>" in cell("25k") and "badge warn" not in cell("25k")  # documented degeneracy
    assert "baseline fails upstream" in cell("11p")


def test_an_unaudited_or_stale_row_says_so(client):
    w = factories.workload("12p")
    w.null_audit = {**w.null_audit, "current": False}
    w.save(update_fields=["null_audit"])
    other = factories.workload("8p")
    other.null_audit = {}
    other.save(update_fields=["null_audit"])
    html = client.get("/workloads/").content.decode()
    row = re.search(r'<tr data-workload="12p">(.*?)</tr>', html, re.S).group(1)
    assert ">stale</span>" in row
    assert "not audited" in re.search(r'<tr data-workload="8p">(.*?)</tr>', html, re.S).group(1)
    assert ">stale</span>" in client.get(f"/workloads/{w.slug}/").content.decode()


def test_api_workload_detail_returns_upstream_deviations_and_the_audit(client):
    factories.workload("38k")
    d = client.get("/api/v1/workloads/38k/").json()
    wl = registry.get("38k")
    assert d["upstream"]["commit"] == wl.upstream.commit and d["upstream"]["url"] == wl.upstream.url
    assert d["deviations"] == [dv.summary() for dv in wl.deviations]
    assert d["null_audit"]["current"] is True and d["null_audit"]["content_hash"] == wl.content_hash
    assert d["null_audit"]["ours"]["kernels"]["zeros"]["passes"] is False
    assert d["null_audit"]["public"]["commit"] == wl.upstream.commit
    listed = client.get("/api/v1/workloads/").json()["results"]
    assert "null_audit" not in listed[0] and "deviations" not in listed[0]


def test_docs_explain_upstream_and_null_kernels(client):
    for wid in ("6p", "12p", "25k", "38k", "11p"):
        factories.workload(wid)
    html = client.get("/docs/").content.decode()
    assert '<h2 id="upstream">Upstream and deviations</h2>' in html
    assert '<h2 id="null-kernels">' in html and 'href="#null-kernels"' in html
    kinds = re.search(r'<ul id="deviation-kinds">(.*?)</ul>', html, re.S).group(1)
    for kind in ("public-file", "tolerance", "degenerate", "inputs", "small-profile"):
        assert f"<strong>{kind}</strong>" in kinds
    assert 'href="/workloads/38k-matmul-dropout-softmax/#upstream">38k</a>' in kinds
    passes = re.search(r'<span id="public-null-passes">(.*?)</span>', html, re.S).group(1)
    assert "6p" in passes and "25k" in passes and "12p" not in passes
    assert "only documented degeneracies pass" in html and "25k</a>: the mean passes" in html
    assert "Not run upstream" in html and "fails in its own harness" in html
