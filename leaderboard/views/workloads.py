from django.shortcuts import get_object_or_404, render

from catalog.models import HardwareTarget, Workload
from jaxbench.workloads.sets import SET_FILTERS, SET_LABELS
from leaderboard.data import default_hardware, experts_for
from leaderboard.highlight import STYLE_DEFS, highlighted
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.null_kernels import describe, deviation_rows
from leaderboard.versions import earlier_results, parse_versions
from leaderboard.views.workload_results import workload_results_context
from submissions.models import Submission

# name -> (label, filter), from the one definition of the workload sets
SETS = {name: (SET_LABELS[name], flt) for name, flt in SET_FILTERS.items()}


def _intensity(cost):
    return cost["flops"] / cost["bytes"] if cost.get("bytes") else None


def best_by_workload(hardware) -> dict[int, dict]:
    """Per workload (pk) on ``hardware``: the best published, verified result (submission,
    team, method, speedup and interval), by how much it leads the next submission (``lead``,
    best / runner-up, None when it is alone) and the expert's speedup. Two queries."""
    out: dict[int, dict] = {}
    results = (
        WorkloadResult.objects.filter(
            hardware=hardware,
            source=SubmissionSummary.EVALUATED,
            summary__complete=True,
            best_speedup__isnull=False,
            submission__in=Submission.objects.public(),
        )
        .order_by("workload_id", "-best_speedup", "submission_id")
        .values_list(
            "workload_id",
            "submission_id",
            "submission__team__name",
            "submission__method",
            "best_speedup",
            "best_low",
            "best_high",
        )
    )
    for wl, sid, team, method, s, lo, hi in results:
        entry = out.get(wl)
        if entry is None:
            out[wl] = {
                "submission": sid,
                "team": team,
                "method": method,
                "best_speedup": s,
                "best_low": lo,
                "best_high": hi,
                "lead": None,
                "runner_up": None,
            }
        elif entry["runner_up"] is None:
            entry["runner_up"] = sid
            entry["lead"] = entry["best_speedup"] / s if s else None
    experts = {e["workload_id"]: e for e in experts_for(hardware).values()}
    for wl, e in experts.items():
        out.setdefault(wl, {})["expert"] = e
    return out


def workload_list(request):
    chosen = request.GET.get("set", "all")
    if chosen not in SETS:
        chosen = "all"
    hw = None
    if request.GET.get("hardware"):
        hw = HardwareTarget.objects.filter(slug=request.GET["hardware"]).first()
    hw = hw or default_hardware()
    best = best_by_workload(hw) if hw else {}
    rows = []
    for w in Workload.objects.filter(**SETS[chosen][1]):
        # a multi-configuration workload: its first configuration stands for it here
        small, full = w.cases("small")[0], w.cases("full")[0]
        rows.append(
            {
                "w": w,
                "small": w.shapes.get(small, {}),
                "full": w.shapes.get(full, {}),
                "cost": w.costs.get(full, {}),
                "intensity": _intensity(w.costs.get(full, {})),
                "best": best.get(w.pk, {}),
                "n_configurations": len(w.cases("full")) if w.configurations else 0,
                "audit": describe(w.null_audit, w.degenerate),
            }
        )
    levels = set(Workload.objects.values_list("level", flat=True).distinct())
    return render(
        request,
        "leaderboard/workload_list.html",
        {
            "rows": rows,
            # a later level's tab only once it has workloads
            "sets": {k: v for k, v in SETS.items() if v[1].get("level", 1) in levels or k == chosen},
            "chosen": chosen,
            "hw": hw,
            "hardware_targets": list(HardwareTarget.objects.all()),
        },
    )


def workload_detail(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    costs = {p: dict(c, intensity=_intensity(c)) for p, c in w.costs.items()}
    ctx = {
        "w": w,
        "costs": costs,
        "configurations": _configuration_table(w),
        "reference_html": highlighted(w.reference_source),
        "pygments_css": STYLE_DEFS,
        "deviations": deviation_rows(w.deviations),
        "audit": describe(w.null_audit, w.degenerate),
    }
    # the results section: baselines, experts, published results, roofline
    ctx.update(workload_results_context(w))
    # ?versions=all|N: results under earlier versions of the workload (never ranked)
    chosen = parse_versions(request.GET.get("versions"), w.version)
    ctx["versions_chosen"] = chosen
    ctx["earlier_results"] = earlier_results(w, chosen)
    return render(request, "leaderboard/workload_detail.html", ctx)


def _configuration_table(w) -> list[dict]:
    """A multi-configuration workload's configurations: per name, the values and input shapes of
    each profile; [] for a one-configuration workload."""
    table = []
    # each configuration's harness case, named by the one definition (catalog.Workload.cases)
    cases = {p: dict(zip((w.configurations or {}).get(p, {}), w.cases(p))) for p in ("small", "full")}
    for name in (w.configurations or {}).get("full", {}):
        row: dict = {"name": name}
        for profile in ("small", "full"):
            case = cases[profile].get(name, "")
            row[profile] = {
                "values": w.configurations[profile][name],
                "inputs": (w.shapes.get(case) or {}).get("inputs", []),
                "cost": w.costs.get(case, {}),
            }
        table.append(row)
    return table
