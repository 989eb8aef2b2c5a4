from django.shortcuts import get_object_or_404, render

from catalog.models import HardwareTarget, Workload
from jaxbench.workloads import absent
from jaxbench.workloads.sets import SET_FILTERS, SET_LABELS, SET_LEVELS, baseline_of
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
    best / runner-up, None when it is alone) and the expert's speedup. Three queries.

    The ranking reads each summary's ``best`` (workload -> its WorkloadResult's best speedup,
    kept together by the folding code): one row per submission, not one per submission and
    workload (reading the 10,000 wide WorkloadResult rows of 200 submissions cost 50 ms on
    SQLite); only the leaders' intervals are read from their WorkloadResults."""
    wids = dict(Workload.objects.values_list("wid", "pk"))
    entries: dict[int, list[tuple]] = {}
    for summary_id, sid, team, method, best in (
        SubmissionSummary.objects.filter(
            hardware=hardware,
            source=SubmissionSummary.EVALUATED,
            complete=True,
            submission__in=Submission.objects.public(),
        )
        .order_by()
        .values_list("pk", "submission_id", "submission__team__name", "submission__method", "best")
    ):
        for wid, s in (best or {}).items():
            if s is not None and wid in wids:
                entries.setdefault(wids[wid], []).append((-s, sid, summary_id, team, method))
    out: dict[int, dict] = {}
    for wl, ranked in entries.items():
        ranked.sort()  # best first, then the lower submission id (the order the board's ties keep)
        (neg, sid, summary_id, team, method), runner_up = ranked[0], ranked[1] if len(ranked) > 1 else None
        out[wl] = {
            "submission": sid,
            "summary": summary_id,
            "team": team,
            "method": method,
            "best_speedup": -neg,
            "best_low": None,
            "best_high": None,
            "lead": (-neg / -runner_up[0]) if runner_up and runner_up[0] else None,
            "runner_up": runner_up[1] if runner_up else None,
        }
    leaders = {(e["summary"], wl) for wl, e in out.items()}
    for summary_id, wl, lo, hi in WorkloadResult.objects.filter(
        summary_id__in={s for s, _ in leaders}, workload_id__in={w for _, w in leaders}
    ).values_list("summary_id", "workload_id", "best_low", "best_high"):
        if (summary_id, wl) in leaders:
            out[wl]["best_low"], out[wl]["best_high"] = lo, hi
    for e in out.values():
        del e["summary"]
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
                "runs_here": w.runs_on(hw.platform) if hw else True,
            }
        )
    levels = set(Workload.objects.values_list("level", flat=True).distinct())
    level = SET_LEVELS[chosen]
    # a later level's public tasks not here yet, with why: the tab shows the level's whole list
    not_here = absent.of_level(level)
    public_here = sum(1 for r in rows if r["w"].upstream)  # a workload that names its public file
    return render(
        request,
        "leaderboard/workload_list.html",
        {
            "rows": rows,
            # a later level's tab only once it has workloads
            "sets": {k: v for k, v in SETS.items() if v[1].get("level", 1) in levels or k == chosen},
            "chosen": chosen,
            "baseline": baseline_of(chosen),
            "hw": hw,
            "hardware_targets": list(HardwareTarget.objects.all()),
            "level": level,
            "not_here": not_here,
            "public_here": public_here,
            "public_tasks": public_here + len(not_here),
        },
    )


def workload_detail(request, slug):
    w = get_object_or_404(Workload, slug=slug)
    costs = {p: dict(c, intensity=_intensity(c)) for p, c in w.costs.items()}
    ctx = {
        "w": w,
        "costs": costs,
        "configurations": _configuration_table(w),
        # a workload whose values all live in its configurations has no per-profile parameters
        "has_parameters": any(w.profiles.values()),
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
