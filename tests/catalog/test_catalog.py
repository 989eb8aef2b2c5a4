"""The catalog: the registry's mirror in the database, and the starter files built from it."""

import ast

import pytest
from django.core.management import call_command

from catalog.models import HardwareTarget, Workload
from catalog.starter import starter_source
from jaxbench import hardware, workloads
from tests import factories

pytestmark = pytest.mark.django_db


def test_sync_registry_mirrors_every_workload_and_target_and_is_idempotent(capsys):
    call_command("sync_registry")
    first = dict(Workload.objects.values_list("wid", "atol"))
    n = len(workloads.ids())
    assert set(first) == set(workloads.ids()) and len(workloads.of_level(1)) == 50
    assert set(HardwareTarget.objects.values_list("slug", flat=True)) == set(hardware.TARGETS)
    call_command("sync_registry")
    assert f"0 created, {n} updated" in capsys.readouterr().out.splitlines()[-1]
    assert dict(Workload.objects.values_list("wid", "atol")) == first


def test_a_workload_row_knows_its_registry_entry_and_its_page():
    w = factories.workload("12p")
    assert w.registry_entry.slug == w.slug
    assert w.get_absolute_url() == f"/workloads/{w.slug}/"


@pytest.mark.parametrize("wid", ["12p", "1p", "41k"])
def test_the_starter_file_is_self_contained_and_defines_workload(wid, client):
    w = factories.workload(wid)
    source = starter_source(w.registry_entry)
    tree = ast.parse(source)
    compile(source, "candidate.py", "exec")  # as Python loads it: a misplaced __future__ import fails here
    assert any(isinstance(n, ast.FunctionDef) and n.name == "workload" for n in tree.body)
    # the computation only: the workload's declaration and its upstream metadata stay out
    assert "Upstream(" not in source and "REPOSITORY" not in source
    relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    assert relative == [], "a starter file must not import the registry's helpers"
    resp = client.get(f"/workloads/{w.slug}/starter.py")
    assert resp.status_code == 200 and resp.content.decode() == source
    assert resp["Content-Disposition"] == f'attachment; filename="{w.slug}.py"'


def test_the_starter_file_is_served_from_the_mirror(client, monkeypatch):
    """sync_registry builds it; a web worker serves it without the registry (importing JAX there
    cost a worker's first starter request 1.9 s), and builds it only for a mirror synced before."""
    w = factories.workload("12p")
    assert w.starter_source == starter_source(w.registry_entry)
    Workload.objects.filter(pk=w.pk).update(starter_source="# as synced\n")

    def no_registry(self):
        raise AssertionError("the starter view read the registry")

    monkeypatch.setattr(Workload, "registry_entry", property(no_registry))
    assert client.get(f"/workloads/{w.slug}/starter.py").content.decode() == "# as synced\n"
    monkeypatch.undo()
    Workload.objects.filter(pk=w.pk).update(starter_source="")
    assert client.get(f"/workloads/{w.slug}/starter.py").content.decode() == starter_source(w.registry_entry)
