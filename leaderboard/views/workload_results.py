"""The results section of a workload's page: the XLA baseline and expert times per hardware
target, every published submission's best speedup on it, and a roofline of each target."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import Count, FloatField, Max, OuterRef, Q, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
from evaluator.models import Evaluation
from jaxbench.metrics import roofline
from leaderboard import charts
from leaderboard.data import cache_key
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.views.exports import export_response, wants_export
from submissions.models import Submission

EXPORT_COLUMNS = [
    "hardware",
    "kind",
    "submission",
    "team",
    "method",
    "model",
    "provenance",
    "best_speedup",
    "best_low",
    "best_high",
    "best_before_intervals",
    "first_correct_index",
    "n_samples",
    "median_s",
    "baseline_median_s",
    "flops_per_s",
    "jax_version",
    "harness_version",
]


def _cost(w, profile):
    c = (w.costs or {}).get(profile) or {}
    flops, nbytes = c.get("flops"), c.get("bytes")
    return flops, (flops / nbytes if flops and nbytes else None)


def _best_sample(key: str) -> Subquery:
    """A record key of a result row's best sample (its main evaluation; the latest where there
    are several), read in the results query itself: no query more."""
    best = Evaluation.objects.filter(
        candidate__submission_id=OuterRef("submission_id"),
        candidate__workload_id=OuterRef("workload_id"),
        candidate__index=OuterRef("best_index"),
        hardware_id=OuterRef("hardware_id"),
        stage=Evaluation.MAIN,
    ).order_by("-finished_at")
    value = best.annotate(value=Cast(KT(f"record__{key}"), FloatField())).values("value")[:1]
    return Subquery(value, output_field=FloatField())


def workload_results(w) -> list[dict]:
    """One entry per hardware target with anything to show (baseline, expert or results)."""
    baselines: dict[int, list] = {}
    for b in Baseline.objects.filter(workload=w).order_by("-measured_at"):
        baselines.setdefault(b.hardware_id, []).append(b)
    experts = {e.hardware_id: e for e in ExpertReference.objects.filter(workload=w)}
    results: dict[int, list] = {}
    for r in (
        WorkloadResult.objects.filter(
            workload=w, source=SubmissionSummary.EVALUATED, submission__in=Submission.objects.public()
        )
        .order_by("-best_speedup", "submission_id")
        .values(
            "hardware_id",
            "submission_id",
            "submission__team__name",
            "submission__method",
            "submission__model_name",
            "summary__complete",
            "summary__jax_versions",
            "summary__harness_versions",
            "best_speedup",
            "best_low",
            "best_high",
            "best_before_intervals",
            "first_correct_index",
            "n_samples",
            "best_median_s",
            "baseline_median_s",
            # the best sample's timing spreads: "time ± spread" beside the verdict
            spread=_best_sample("timing__spread"),
            baseline_timing_spread=_best_sample("baseline_timing__spread"),
            baseline_spread=_best_sample("baseline_spread"),
        )
    ):
        results.setdefault(r["hardware_id"], []).append(r)
    out = []
    for hw in HardwareTarget.objects.filter(pk__in=set(baselines) | set(experts) | set(results)):
        flops, intensity = _cost(w, hw.profile)
        base = baselines.get(hw.pk, [])
        xla_s = base[0].median_s if base else None
        ex = experts.get(hw.pk)
        rows = []
        points = []
        if xla_s and flops:
            points.append(
                {
                    "label": f"{w.baseline_name} {xla_s * 1e3:.3f} ms",
                    "kind": "xla",
                    "intensity": intensity,
                    "flops_per_s": flops / xla_s,
                }
            )
        if ex and ex.median_s and flops:
            points.append(
                {
                    "label": f"expert {ex.implementation}",
                    "kind": "expert",
                    "intensity": intensity,
                    "flops_per_s": flops / ex.median_s,
                }
            )
        for r in results.get(hw.pk, []):
            base_s = r["baseline_median_s"] or xla_s
            t = r["best_median_s"] or (base_s / r["best_speedup"] if r["best_speedup"] and base_s else None)
            fps = flops / t if t and flops else None
            row = {
                "hardware": hw.slug,
                "kind": "submission",
                "submission": r["submission_id"],
                "team": r["submission__team__name"],
                "method": r["submission__method"],
                "model": r["submission__model_name"],
                "provenance": "verified" if r["summary__complete"] else "partial",
                "best_speedup": r["best_speedup"],
                "best_low": r["best_low"],
                "best_high": r["best_high"],
                "best_before_intervals": r["best_before_intervals"],
                "first_correct_index": r["first_correct_index"],
                "n_samples": r["n_samples"],
                "median_s": t,
                "baseline_median_s": r["baseline_median_s"],
                "spread": r["spread"],
                "baseline_spread": r["baseline_timing_spread"]
                if r["baseline_timing_spread"] is not None
                else r["baseline_spread"],
                "flops_per_s": fps,
                "jax_version": ", ".join(r["summary__jax_versions"] or []),
                "harness_version": ", ".join(r["summary__harness_versions"] or []),
            }
            rows.append(row)
            if fps and r["best_speedup"]:
                points.append(
                    {
                        "label": f"#{r['submission_id']} {row['team']} · {row['method']} ({r['best_speedup']:.2f}x)",
                        "kind": "submission",
                        "intensity": intensity,
                        "flops_per_s": fps,
                    }
                )
        figure = None
        if hw.peak_flops and hw.peak_bandwidth and points:
            figure = charts.roofline(
                points,
                peak_flops=hw.peak_flops,
                peak_bandwidth=hw.peak_bandwidth,
                title=f"Roofline on {hw.name}",
                baseline=w.baseline_name,
            )
        out.append(
            {
                "hw": hw,
                "script_id": f"fig-roofline-{hw.slug}",
                "baselines": base,
                "expert": ex,
                "rows": rows,
                "flops": flops,
                "intensity": intensity,
                "figure": figure,
                "xla_flops_per_s": flops / xla_s if flops and xla_s else None,
                # the limit beside each time ("x% of limit"): None without sourced peaks (cpu)
                "roof": roofline.of_case(w.costs, hw.profile, hw.slug),
            }
        )
    return out


def workload_stamp(w) -> str:
    """Changes whenever the results section of workload ``w`` may change."""
    parts = [
        WorkloadResult.objects.filter(workload=w).aggregate(m=Max("updated_at"), c=Count("id")),
        Submission.objects.aggregate(
            p=Max("published_at"),
            w=Max("withdrawn_at"),
            c=Count("id", filter=Q(published_at__isnull=False, withdrawn_at__isnull=True)),
        ),
        Baseline.objects.filter(workload=w).aggregate(m=Max("measured_at"), c=Count("id")),
        ExpertReference.objects.filter(workload=w).aggregate(m=Max("updated_at"), c=Count("id")),
    ]
    return "|".join(str(v) for p in parts for v in p.values())


def workload_results_context(w) -> dict:
    """Context the workload page's ``results`` block needs: its HTML, rendered once per stamp."""
    key = cache_key("wl", w.pk, workload_stamp(w))
    cached = cache.get(key)
    if cached is None:
        results = workload_results(w)
        cached = {
            "html": render_to_string("leaderboard/_workload_results_body.html", {"w": w, "lb_results": results}),
            "has_figures": any(e["figure"] for e in results),
        }
        cache.set(key, cached, 3600)
    return {"lb_results_html": mark_safe(cached["html"]), "lb_has_figures": cached["has_figures"]}


def workload_results_export(request, slug, fmt=None):
    """``/workloads/<slug>/results.csv|json``: the same table as the page."""
    w = get_object_or_404(Workload, slug=slug)
    fmt = fmt or wants_export(request) or "json"
    rows = []
    for entry in workload_results(w):
        hw = entry["hw"]
        for b in entry["baselines"]:
            rows.append(
                {
                    "hardware": hw.slug,
                    "kind": "xla",
                    "median_s": b.median_s,
                    "best_speedup": 1.0,
                    "jax_version": b.jax_version,
                    "harness_version": b.harness_version,
                    "flops_per_s": entry["flops"] / b.median_s if entry["flops"] and b.median_s else None,
                }
            )
        ex = entry["expert"]
        if ex:
            rows.append(
                {
                    "hardware": hw.slug,
                    "kind": "expert",
                    "method": ex.implementation,
                    "median_s": ex.median_s,
                    "best_speedup": ex.speedup,
                    "best_low": ex.speedup_lo,
                    "best_high": ex.speedup_hi,
                    "best_before_intervals": ex.timed_before_intervals,
                    "jax_version": ex.jax_version,
                    "harness_version": ex.harness_version,
                    "flops_per_s": entry["flops"] / ex.median_s if entry["flops"] and ex.median_s else None,
                }
            )
        rows.extend(entry["rows"])
    meta = {"workload": w.wid, "slug": w.slug, "title": w.title}
    return export_response(fmt, f"workload-{w.wid}-results", meta, rows, EXPORT_COLUMNS)
