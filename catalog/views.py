"""The starter file of a workload: its reference, ready to be turned into a Pallas kernel."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from catalog.models import Workload
from catalog.starter import starter_source


def workload_starter(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    # built by sync_registry; a mirror synced before it kept one builds it here (imports the registry)
    source = w.starter_source or starter_source(w.registry_entry)
    response = HttpResponse(source, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{w.slug}.py"'
    return response
