"""The starter file of a workload: its reference, ready to be turned into a Pallas kernel."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from catalog.models import Workload
from catalog.starter import starter_source


def workload_starter(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    response = HttpResponse(starter_source(w.registry_entry), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{w.slug}.py"'
    return response
