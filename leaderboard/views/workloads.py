from django.shortcuts import get_object_or_404, render

from catalog.models import Workload
from jaxbench.workloads.sets import SET_FILTERS, SET_LABELS
from leaderboard.highlight import STYLE_DEFS, highlighted
from leaderboard.views.workload_results import workload_results_context

# name -> (label, filter), from the one definition of the workload sets
SETS = {name: (SET_LABELS[name], flt) for name, flt in SET_FILTERS.items()}


def _intensity(cost):
    return cost["flops"] / cost["bytes"] if cost.get("bytes") else None


def workload_list(request):
    chosen = request.GET.get("set", "all")
    if chosen not in SETS:
        chosen = "all"
    rows = []
    for w in Workload.objects.filter(**SETS[chosen][1]):
        rows.append(
            {
                "w": w,
                "small": w.shapes.get("small", {}),
                "full": w.shapes.get("full", {}),
                "cost": w.costs.get("full", {}),
                "intensity": _intensity(w.costs.get("full", {})),
            }
        )
    return render(request, "leaderboard/workload_list.html", {"rows": rows, "sets": SETS, "chosen": chosen})


def workload_detail(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    costs = {p: dict(c, intensity=_intensity(c)) for p, c in w.costs.items()}
    ctx = {
        "w": w,
        "costs": costs,
        "reference_html": highlighted(w.reference_source),
        "pygments_css": STYLE_DEFS,
    }
    # the results section: baselines, experts, published results, roofline
    ctx.update(workload_results_context(w))
    return render(request, "leaderboard/workload_detail.html", ctx)
