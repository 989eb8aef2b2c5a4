import functools

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from evaluator.models import Workload
from evaluator.starter import starter_source

SETS = {
    "all": ("All 50", {}),
    "production": ("Production 17", {"source": "maxtext"}),
    "kernelbench": ("KernelBench 33", {"source": "kernelbench-l2"}),
    "expert": ("Expert 8", {"expert": True}),
}


_STYLE_DEFS = HtmlFormatter().get_style_defs(".highlight")


@functools.lru_cache(maxsize=128)
def highlighted(code: str) -> str:
    """Keyed by the source itself: a changed reference is highlighted afresh."""
    return highlight(code, PythonLexer(), HtmlFormatter(cssclass="highlight", nowrap=False))


def _intensity(cost):
    return cost["flops"] / cost["bytes"] if cost.get("bytes") else None


def workload_list(request):
    chosen = request.GET.get("set", "all")
    if chosen not in SETS:
        chosen = "all"
    rows = []
    for w in Workload.objects.filter(**SETS[chosen][1]):
        rows.append({"w": w, "small": w.shapes.get("small", {}), "full": w.shapes.get("full", {}),
                     "cost": w.costs.get("full", {}), "intensity": _intensity(w.costs.get("full", {}))})
    return render(request, "evaluator/workload_list.html",
                  {"rows": rows, "sets": SETS, "chosen": chosen})


def workload_detail(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    costs = {p: dict(c, intensity=_intensity(c)) for p, c in w.costs.items()}
    ctx = {
        "w": w, "costs": costs, "reference_html": highlighted(w.reference_source),
        "pygments_css": _STYLE_DEFS,
    }
    # Results section (leaderboard app): baselines, experts, published results, roofline.
    from leaderboard.views.workload import workload_results_context
    ctx.update(workload_results_context(w))
    return render(request, "evaluator/workload_detail.html", ctx)


def workload_starter(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    response = HttpResponse(starter_source(w.registry_entry), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{w.slug}.py"'
    return response
