from django.conf import settings
from django.shortcuts import redirect, render
from django.templatetags.static import static

from catalog.models import Workload
from evaluator.health import status
from jaxbench import limits
from jaxbench.verdict import pallas_share
from jaxbench.verdict.rules import FLOOR_SLACK
from jaxbench.workloads.upstream import DEVIATION_KINDS, REPOSITORY_URL, SUITE_DIR
from leaderboard.columns import COLUMNS
from leaderboard.null_kernels import describe
from leaderboard.study import PUBLISHED_RESULTS


def home(request):
    return render(request, "portal/home.html", {"published": PUBLISHED_RESULTS})


def docs(request):
    # deferred: the web process imports no harness or sandbox code at start-up
    from jaxbench.harness import speed
    from jaxbench.sandbox import cores

    pallas = {
        "required": settings.JAXBENCH_REQUIRE_PALLAS,
        "threshold": pallas_share.THRESHOLD,
        "allowances": [
            {"wid": wid, "share": share, "reason": reason}
            for wid, (share, reason) in sorted(pallas_share.OUTSIDE_ALLOWANCE.items())
        ],
    }
    rows = list(
        Workload.objects.only(
            "wid", "slug", "title", "level", "public_file_note", "degenerate", "upstream", "deviations", "null_audit"
        )
    )
    public_file_notes = [w for w in rows if w.public_file_note]
    return render(
        request,
        "portal/docs.html",
        {
            "pallas": pallas,
            "public_file_notes": public_file_notes,
            "board_columns": COLUMNS,
            "upstream": upstream_summary(rows),
            "test_runs": {"most": limits.TEST_RUN_MAX_KERNELS, "days": limits.TEST_RUN_DAYS},
            "timing_core": {
                "contention": round(cores.CONTENTION_LIMIT * 100),
                "min_cores": cores.MIN_CORES_FOR_DEDICATION,
                "neighbours": speed.NEIGHBOUR_LIMIT,
                "shared": round(speed.SHARED_SYSTEMATIC["cpu"] * 100),
            },
            "floor_slack": round(FLOOR_SLACK["tpu"] * 100),
        },
    )


def upstream_summary(rows) -> dict:
    """For /docs/#upstream and #null-kernels: the deviation kinds with the workloads of each, and
    the null-kernel audit over all workloads (ours: how many null kernels, how many pass; the
    public check: the workloads where it accepts one, with which)."""
    kinds = [
        {"kind": k, "text": text, "workloads": [w for w in rows if any(d.get("kind") == k for d in w.deviations or [])]}
        for k, text in DEVIATION_KINDS.items()
    ]
    audited, public_passes, ours_passes, public_not_run = 0, [], [], []
    n_kernels = 0
    for w in rows:
        a = describe(w.null_audit, w.degenerate)
        if a is None:
            continue
        audited += 1
        n_kernels += a["n"]
        if not a["all_fail"]:
            ours_passes.append({"w": w, "line": a["ours_line"], "degenerate": w.degenerate})
        if a["public_passes"]:
            public_passes.append({"w": w, "line": a["public_line"], "sizes": a["public"].get("sizes", "")})
        elif a["public"].get("status") != "run":
            public_not_run.append({"w": w, "line": a["public_line"], "reason": a["public"].get("reason", "")})
    return {
        "suite_url": f"{REPOSITORY_URL}/tree/main/{SUITE_DIR}",
        "with_file": sum(1 for w in rows if w.upstream),
        "without_deviations": [w for w in rows if w.upstream and not w.deviations],
        "kinds": kinds,
        "audited": audited,
        "n_kernels": n_kernels,
        "ours_passes": ours_passes,
        "public_passes": public_passes,
        "public_not_run": public_not_run,
    }


def health(request):
    return render(request, "portal/health.html", {"status": status()})


def favicon(request):
    """Browsers ask for /favicon.ico whatever the page links: send them to the static icon
    (a temporary redirect: the hashed static name changes with the file)."""
    return redirect(static("favicon.svg"))
