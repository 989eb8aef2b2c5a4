"""The compare page (``/compare/?s=1&s=2``): submissions side by side."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render

from jaxbench.metrics.curves import set_values, unpack_curves
from jaxbench.workloads.sets import SET_LABELS, SET_NAMES
from leaderboard import charts
from leaderboard.data import fast_curve_series, set_members, shown_sets
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.views.exports import export_response, wants_export
from submissions.models import Submission


def compare(request):
    """2 to 4 submissions side by side: fast@N curves, per-workload speedups and the table."""
    ids = []
    for v in request.GET.getlist("s"):
        try:
            ids.append(int(v))
        except ValueError:
            raise Http404("bad submission id") from None
    ids = list(dict.fromkeys(ids))
    wset = request.GET.get("set") if request.GET.get("set") in SET_NAMES else "all"
    ctx = {"ids": ids, "wset": wset, "sets": SET_LABELS}
    if not 2 <= len(ids) <= 4:
        ctx["error"] = "Choose 2 to 4 submissions to compare." if ids else None
        return render(request, "leaderboard/compare.html", ctx, status=400 if ids else 200)
    subs = {
        s.pk: s
        for s in Submission.objects.visible_to(request.user).select_related("team", "hardware").filter(pk__in=ids)
    }
    if len(subs) != len(ids):
        raise Http404("submission not found")
    members = set_members()
    wids = [w["wid"] for w in members[wset]]
    # every compared submission's summaries in one query, their per-workload intervals in another
    summaries: dict[int, tuple] = {pk: (None, None) for pk in ids}
    for summ in SubmissionSummary.objects.filter(submission_id__in=ids):
        if summ.hardware_id != subs[summ.submission_id].hardware_id:
            continue
        ev, rep = summaries[summ.submission_id]
        if summ.source == SubmissionSummary.REPORTED:
            rep = summ
        else:
            ev = summ
        summaries[summ.submission_id] = (ev, rep)
    bounds: dict[int, tuple[dict, dict]] = {pk: ({}, {}) for pk in ids}
    evaluated_pks = [ev.pk for ev, _ in summaries.values() if ev is not None]
    for sid, wid, lo, hi in WorkloadResult.objects.filter(summary_id__in=evaluated_pks).values_list(
        "submission_id", "workload__wid", "best_low", "best_high"
    ):
        if lo is not None:
            bounds[sid][0][wid] = lo
        if hi is not None:
            bounds[sid][1][wid] = hi
    columns, curves, series = [], [], []
    for pk in ids:
        s = subs[pk]
        evaluated, reported = summaries[pk]
        # only measured figures stand in the compared columns; a trace's claims are apart
        summ = evaluated if evaluated is not None and evaluated.n_samples else None
        label = f"#{s.pk} {s.team.name} · {s.method}"
        col = {"s": s, "label": label, "summary": summ, "values": None, "best": {}, "claimed": reported}
        if summ is not None:
            c = unpack_curves(getattr(summ, f"curves_{wset}"))
            size = len(members[wset])
            col["values"] = set_values(c, size)
            col["best"] = summ.best or {}
            if size and len(c["fast"]):
                curves.append((label, [x / size for x in c["fast"]]))
        low, high = bounds[pk] if summ is evaluated else ({}, {})
        series.append({"label": label, "best": col["best"], "low": low, "high": high})
        columns.append(col)
    table = [
        {"wid": wid, "cells": [{"attempted": wid in col["best"], "speedup": col["best"].get(wid)} for col in columns]}
        for wid in wids
    ]
    fmt = wants_export(request)
    if fmt:
        rows = []
        for col in columns:
            summ = col["summary"]
            for wid in wids:
                rows.append(
                    {
                        "submission": col["s"].pk,
                        "team": col["s"].team.name,
                        "method": col["s"].method,
                        "model": col["s"].model_name,
                        "hardware": col["s"].hardware.slug,
                        "workload": wid,
                        "best_speedup": col["best"].get(wid),
                        "provenance": summ.provenance if summ else "not measured yet",
                        "jax_version": ", ".join(summ.jax_versions) if summ else "",
                        "harness_version": ", ".join(summ.harness_versions) if summ else "",
                    }
                )
        meta = {
            "submissions": ", ".join(str(i) for i in ids),
            "workload_set": wset,
            "hardware": ", ".join(sorted({c["s"].hardware.slug for c in columns})),
        }
        return export_response(
            fmt,
            "compare-" + "-".join(str(i) for i in ids),
            meta,
            rows,
            [
                "submission",
                "team",
                "method",
                "model",
                "hardware",
                "workload",
                "best_speedup",
                "provenance",
                "jax_version",
                "harness_version",
            ],
            extra={
                "summaries": [{"submission": c["s"].pk, **(c["values"] or {})} for c in columns],
                # a trace's own claims: self-reported by the agent, not measured here
                "claimed_by_agent": [
                    {
                        "submission": c["s"].pk,
                        "solved_all": c["claimed"].solved_all,
                        "floored_geomean_all": c["claimed"].geomean_all,
                    }
                    for c in columns
                    if c["claimed"] is not None
                ],
            },
        )
    ctx.update(
        {
            "columns": columns,
            "claims": [c for c in columns if c["claimed"] is not None],
            "table": table,
            "figures": [
                {
                    "id": "fig-fast",
                    "figure": charts.fast_curves(fast_curve_series(curves), title=f"fast@N on {SET_LABELS[wset]}"),
                },
                {
                    "id": "fig-scatter",
                    "wide": True,
                    "figure": charts.speedup_scatter(
                        series, wids, subtitle="best correct sample per workload; bars: 95% interval; log scale"
                    ),
                },
            ],
            "set_tabs": [
                (k, v, "?" + "&".join(f"s={i}" for i in ids) + f"&set={k}")
                for k, v in shown_sets({n: len(m) for n, m in members.items()}, wset).items()
            ],
            "qs": "&".join(f"s={i}" for i in ids) + f"&set={wset}",
        }
    )
    return render(request, "leaderboard/compare.html", ctx)
