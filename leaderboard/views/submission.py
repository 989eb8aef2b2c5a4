"""A submission's page (``/submissions/<pk>/``), its trace view (``?workload=12p``), its live
progress (``/submissions/<pk>/progress.json``) and the compare page (``/compare/?s=1&s=2``)."""
from __future__ import annotations

from django.core.cache import cache
from django.db.models import Count, Max
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from jaxbench.record import Outcome
from catalog.lookup import find_workload
from catalog.models import Baseline, ExpertReference, Workload
from jaxbench.workloads.sets import SET_LABELS, SET_NAMES
from jaxbench.verdict import pallas_share
from jaxbench.record import format_speedup
from evaluator.models import Evaluation
from evaluator.progress import ACCELERATOR_OVERHEAD_S, submission_progress
from leaderboard import charts
from jaxbench import metrics
from jaxbench.metrics.curves import set_values, unpack_curves
from leaderboard.aggregates.samples import counts_for_candidate
from leaderboard.data import cache_key, experts_for, fast_curve_series, set_members
from leaderboard.highlight import STYLE_DEFS, highlighted
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.views.exports import export_response, wants_export
from submissions.models import Candidate, Submission

MAX_SOURCES = 100


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

def visible_submission(request, pk):
    return get_object_or_404(Submission.objects.visible_to(request.user).select_related("team", "hardware"), pk=pk)


def can_manage(user, submission) -> bool:
    return user.is_authenticated and (user.is_staff or submission.team.is_member(user))


def can_view_code(user, submission) -> bool:
    """Kernel sources: for published submissions, and always for team members and staff."""
    return submission.is_public or can_manage(user, submission)


def summaries_of(submission) -> tuple[SubmissionSummary | None, SubmissionSummary | None]:
    """(evaluated summary on the submission's hardware, self-reported summary)."""
    evaluated = reported = None
    for s in SubmissionSummary.objects.filter(submission=submission, hardware_id=submission.hardware_id):
        if s.source == SubmissionSummary.REPORTED:
            reported = s
        else:
            evaluated = s
    return evaluated, reported


def _estimated_saved_seconds(hardware, stopped_by_workload: dict[int, int]) -> float | None:
    if not stopped_by_workload or not hardware.is_accelerator:
        return None
    medians = dict(Baseline.objects.filter(hardware=hardware, workload_id__in=list(stopped_by_workload))
                   .values_list("workload_id", "median_s"))
    return round(sum(n * (ACCELERATOR_OVERHEAD_S + 60 * medians.get(w, 0.0))
                     for w, n in stopped_by_workload.items()), 1)


def progress_for(submission, summary: SubmissionSummary | None) -> dict:
    """evaluator.progress.submission_progress while work is in flight; from the summary row
    once every candidate has its final outcome (no scan of the evaluations)."""
    if summary is not None and summary.complete:
        stopped = dict(WorkloadResult.objects.filter(summary=summary, precheck_stopped__gt=0)
                       .values_list("workload_id", "precheck_stopped"))
        return {
            "total": summary.candidates_total, "done": summary.n_samples, "finished": True, "percent": 100.0,
            "stages": None, "outcomes": {o: n for o, n in summary.counts.items() if n},
            "waiting_for": None,
            "precheck_saved": {"candidates": summary.precheck_stopped,
                               "estimated_accelerator_seconds": _estimated_saved_seconds(submission.hardware,
                                                                                         stopped)},
        }
    return submission_progress(submission)


def workload_rows(submission, summary: SubmissionSummary | None, n: int | None = None) -> list[dict]:
    """Per-workload table: outcome, best speedup with interval, first correct / fast index,
    expert speedup and gap (s_w / max(1, expert))."""
    experts = experts_for(submission.hardware)
    results = {}
    if summary is not None:
        results = {r.workload_id: r for r in WorkloadResult.objects.filter(summary=summary)
                   .select_related("workload")}
    workloads = {r.workload_id: r.workload for r in results.values()}
    if summary is None or not summary.complete:
        pending = set(submission.candidates.values_list("workload_id", flat=True).distinct()) - set(workloads)
        workloads.update({w.pk: w for w in Workload.objects.filter(pk__in=pending)})
    mode = summary.mode if summary else metrics.SEQUENTIAL
    rows = []
    for w in sorted(workloads.values(), key=lambda w: w.number):
        r = results.get(w.pk)
        agg = r.agg if r else None
        e = experts.get(w.pk)
        expert_speedup = e["speedup"] if e else None
        s_w = metrics.workload_speedup(agg, n, mode)
        if agg is None or agg.n_samples == 0:
            outcome = "pending"
        elif agg.n_faster:
            outcome = Outcome.CORRECT_FASTER
        elif agg.count(Outcome.CORRECT_TIE):
            outcome = Outcome.CORRECT_TIE
        elif agg.n_correct:
            outcome = Outcome.CORRECT_SLOWER
        else:
            outcome = max(agg.outcome_counts.items(), key=lambda kv: kv[1])[0]
        rows.append({
            "wid": w.wid, "workload_id": w.pk, "slug": w.slug, "title": w.title, "number": w.number,
            "expert_workload": w.expert,
            "outcome": outcome, "n_samples": agg.n_samples if agg else 0,
            "n_correct": agg.n_correct if agg else 0, "counts": agg.outcome_counts if agg else {},
            "best_speedup": metrics.best_within(agg, n) if agg else None,
            "best_low": r.best_low if r and n is None else None,
            "best_high": r.best_high if r and n is None else None,
            "best_before_intervals": bool(r and n is None and r.best_before_intervals),
            "n_tie": agg.count(Outcome.CORRECT_TIE) if agg else 0,
            "best_index": r.best_index if r else None,
            "first_correct_index": r.first_correct_index if r else None,
            "first_faster_index": r.first_faster_index if r else None,
            "floored_speedup": s_w,
            "expert_speedup": expert_speedup,
            "gap": metrics.expert_gaps([agg], [expert_speedup], n, mode)[0] if e else None,
            "precheck_stopped": r.precheck_stopped if r else 0,
        })
    return rows


def _best_candidates(submission, rows) -> dict[int, int]:
    """candidate pk -> workload pk of every row's best sample. Two IN lists (workloads, indexes)
    that the (submission, workload, index) unique index answers, the pairs picked here: SQLite
    plans a long OR of (workload, index) pairs as a scan of the submission's candidates."""
    wanted = {(r["workload_id"], r["best_index"]) for r in rows if r["best_index"] is not None}
    if not wanted:
        return {}
    found = Candidate.objects.filter(submission=submission, workload_id__in={w for w, _ in wanted},
                                     index__in={i for _, i in wanted}).values_list("id", "workload_id", "index")
    return {pk: w for pk, w, i in found if (w, i) in wanted}


def _outside_pallas(submission, rows, best: dict[int, int]) -> None:
    """Each row's best sample's share of FLOPs outside Pallas (its main evaluation's record),
    as ``outside_pallas`` ("3.0%") and ``outside_pallas_where`` (the largest outside op)."""
    for r in rows:
        r["outside_pallas"], r["outside_pallas_where"] = "", ""
    if not best:
        return
    by_workload = {r["workload_id"]: r for r in rows}
    # by candidate id: the (candidate, hardware, stage) unique index answers it row by row
    for ev in Evaluation.objects.filter(candidate_id__in=list(best), hardware=submission.hardware,
                                        stage=Evaluation.MAIN).values("candidate_id", "record__pallas_share"):
        row = by_workload.get(best[ev["candidate_id"]])
        if row is not None:
            row["outside_pallas"] = pallas_share.short(ev["record__pallas_share"])
            row["outside_pallas_where"] = pallas_share.largest(ev["record__pallas_share"])


def _sources(submission, best: dict[int, int]) -> list[dict]:
    """The kernels shown on the page: every candidate of a plain submission (up to
    MAX_SOURCES), the best sample of each workload of a trace."""
    qs = Candidate.objects.filter(submission=submission)
    if submission.kind == submission.TRACE:
        if not best:
            return []
        qs = qs.filter(pk__in=list(best))
    out = []
    for c in qs.select_related("workload").order_by("workload__number", "index")[:MAX_SOURCES]:
        out.append({"wid": c.workload.wid, "index": c.index, "filename": c.filename, "sha": c.code_sha256,
                    "html": highlighted(c.code)})
    return out


# --------------------------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------------------------

def submission_detail(request, pk):
    submission = visible_submission(request, pk)
    if request.GET.get("workload"):
        return trace_view(request, submission)
    evaluated, reported = summaries_of(submission)
    primary = evaluated if evaluated is not None and evaluated.n_samples else (reported or evaluated)
    hw = submission.hardware
    fmt = wants_export(request)
    meta = {
        "submission": submission.pk, "team": submission.team.name, "method": submission.method,
        "model": submission.model_name, "hardware": hw.slug, "kind": submission.kind,
        "sampling": submission.sampling, "provenance": primary.provenance if primary else "pending",
        "jax_versions": ", ".join(primary.jax_versions) if primary else "",
        "harness_versions": ", ".join(primary.harness_versions) if primary else "",
    }
    if fmt:
        cols = ["wid", "title", "outcome", "n_samples", "n_correct", "n_tie", "best_speedup", "best_low",
                "best_high", "best_before_intervals", "best_index", "first_correct_index", "first_faster_index",
                "expert_speedup", "gap"]
        rows = workload_rows(submission, primary)
        return export_response(fmt, f"submission-{submission.pk}-{hw.slug}", meta, rows, cols,
                               extra={"sets": primary.sets if primary else {}})
    progress = progress_for(submission, evaluated)
    code = can_view_code(request.user, submission)
    key = cache_key("sub", submission.pk, submission.published_at, submission.withdrawn_at, code,
                    *(f"{s.pk}@{s.updated_at.isoformat()}" if s else "-" for s in (evaluated, reported)),
                    expert_stamp(hw))
    body = cache.get(key)
    rows = None
    if body is None:
        rows = workload_rows(submission, primary)
        body = _render_body(submission, evaluated, reported, primary, rows, code)
        cache.set(key, body, 3600)
    ctx = {
        "s": submission, "evaluated": evaluated, "reported": reported, "primary": primary,
        "progress": progress, "meta": meta, "rows": rows, "body": mark_safe(body["html"]),
        "has_figures": body["has_figures"], "sources": body["has_sources"] or None,
        "can_manage": can_manage(request.user, submission),
        "pygments_css": STYLE_DEFS,
    }
    return render(request, "leaderboard/submission_detail.html", ctx)


def expert_stamp(hardware) -> str:
    a = ExpertReference.objects.filter(hardware=hardware).aggregate(m=Max("updated_at"), c=Count("id"))
    return f"{a['m']}|{a['c']}"


def _render_body(submission, evaluated, reported, primary, rows, code: bool) -> dict:
    """The part of the page every visitor with the same code permission sees alike: summary,
    per-workload table, charts, outcomes and kernel sources (cached per summary version)."""
    sets, figures = [], []
    members = set_members()
    if primary is not None:
        curves = []
        for name in SET_NAMES:
            c = unpack_curves(getattr(primary, f"curves_{name}"))
            size = len(members[name])
            v = set_values(c, size)
            sets.append(dict(v, key=name, label=SET_LABELS[name]))
            if size and len(c["fast"]):
                curves.append({"label": SET_LABELS[name], "n": list(range(1, len(c["fast"]) + 1)),
                               "fast": [x / size for x in c["fast"]]})
        if curves:
            figures.append({"id": "fig-fast", "figure": charts.fast_curves(curves, title="fast@N by workload set")})
        figures.append({"id": "fig-outcomes", "figure": charts.outcome_breakdown(primary.counts,
                                                                                 title="Outcomes of all samples")})
        gaps = [{"label": r["wid"], "value": r["gap"]} for r in rows if r["expert_workload"] and r["gap"] is not None]
        if gaps:
            figures.append({"id": "fig-gap", "figure": charts.expert_gap_bars(
                gaps, per_workload=True, title="Gap to expert per workload (s_w / expert)")})
    best = _best_candidates(submission, rows)
    sources = _sources(submission, best) if code else None
    _outside_pallas(submission, rows, best)
    html = render_to_string("leaderboard/_submission_body.html", {
        "s": submission, "evaluated": evaluated, "reported": reported, "primary": primary, "rows": rows,
        "sets": sets, "figures": figures, "sources": sources, "outcomes": metrics.OUTCOMES})
    return {"html": html, "has_figures": bool(figures), "has_sources": bool(sources)}


def progress_json(request, pk):
    submission = visible_submission(request, pk)
    evaluated, _ = summaries_of(submission)
    return JsonResponse(progress_for(submission, evaluated))


def _find_workload(value: str):
    w = find_workload(value)
    if w is None:
        raise Http404("unknown workload")
    return w


def trace_view(request, submission):
    """Every sample of one workload in order: outcome, speedup, error message; the lineage of
    the best kernel; the source of the chosen sample."""
    w = _find_workload(request.GET["workload"])
    cands = list(Candidate.objects.filter(submission=submission, workload=w).order_by("index").values(
        "id", "index", "round", "parent_index", "filename", "reported_outcome", "reported_speedup",
        "reported_speedup_lo", "reported_speedup_hi", "tokens_in", "tokens_out", "cost_usd"))
    if not cands:
        raise Http404("no samples for this workload")
    by_cand: dict[int, dict] = {}
    for ev in Evaluation.objects.filter(candidate_id__in=[c["id"] for c in cands], hardware=submission.hardware) \
            .values("candidate_id", "stage", "state", "outcome", "speedup", "speedup_lo",
                    "speedup_hi", "message", "record__pallas_share"):
        cur = by_cand.get(ev["candidate_id"])
        counts = counts_for_candidate(ev["stage"], ev["state"])
        if counts and (cur is None or not cur["_counts"] or cur["stage"] == Evaluation.PRECHECK):
            by_cand[ev["candidate_id"]] = dict(ev, _counts=True)
        elif cur is None:
            by_cand[ev["candidate_id"]] = dict(ev, _counts=False)
    evaluated, reported = summaries_of(submission)
    result = None
    for summ in (evaluated, reported):
        if summ is not None:
            result = WorkloadResult.objects.filter(summary=summ, workload=w).first()
            if result is not None:
                break
    samples = []
    for c in cands:
        ev = by_cand.get(c["id"])
        samples.append({
            "index": c["index"], "round": c["round"], "parent_index": c["parent_index"], "filename": c["filename"],
            "state": ev["state"] if ev else "not scheduled", "stage": ev["stage"] if ev else "",
            "outcome": ev["outcome"] if ev and ev["_counts"] else "",
            "speedup": ev["speedup"] if ev and ev["_counts"] else None,
            "speedup_lo": ev["speedup_lo"] if ev and ev["_counts"] else None,
            "speedup_hi": ev["speedup_hi"] if ev and ev["_counts"] else None,
            "speedup_text": format_speedup(ev["speedup"], ev["speedup_lo"], ev["speedup_hi"])
            if ev and ev["_counts"] and ev["speedup"] is not None else "",
            "before_intervals": bool(ev and ev["_counts"] and ev["speedup"] is not None
                                     and ev["speedup_lo"] is None),
            "message": (ev["message"] or "")[:2000] if ev else "",
            "outside_pallas": pallas_share.short(ev["record__pallas_share"]) if ev else "",
            "outside_pallas_where": pallas_share.largest(ev["record__pallas_share"]) if ev else "",
            "reported_outcome": c["reported_outcome"], "reported_speedup": c["reported_speedup"],
            "reported_speedup_lo": c["reported_speedup_lo"], "reported_speedup_hi": c["reported_speedup_hi"],
            "reported_text": format_speedup(c["reported_speedup"], c["reported_speedup_lo"], c["reported_speedup_hi"])
            if c["reported_speedup"] is not None else "",
            "tokens": ((c["tokens_in"] or 0) + (c["tokens_out"] or 0)) if c["tokens_in"] is not None
            or c["tokens_out"] is not None else None,
            "cost_usd": c["cost_usd"],
        })
    parents = {c["index"]: c["parent_index"] for c in cands}
    best_index = result.best_index if result else None
    lineage = []
    i, seen = best_index, set()
    while i is not None and i not in seen and i in parents:
        seen.add(i)
        lineage.append(i)
        i = parents[i]
    lineage.reverse()
    fmt = wants_export(request)
    if fmt:
        meta = {"submission": submission.pk, "workload": w.wid, "hardware": submission.hardware.slug,
                "jax_versions": ", ".join(evaluated.jax_versions) if evaluated else "",
                "harness_versions": ", ".join(evaluated.harness_versions) if evaluated else ""}
        cols = ["index", "round", "parent_index", "state", "outcome", "speedup", "speedup_lo",
                "speedup_hi", "message", "reported_outcome", "reported_speedup", "reported_speedup_lo",
                "reported_speedup_hi", "tokens", "cost_usd"]
        return export_response(fmt, f"submission-{submission.pk}-{w.wid}-samples", meta, samples, cols,
                               extra={"lineage_of_best": lineage})
    try:
        chosen = int(request.GET.get("sample", best_index if best_index is not None else cands[0]["index"]))
    except ValueError:
        chosen = cands[0]["index"]
    code_html = None
    if can_view_code(request.user, submission):
        code = Candidate.objects.filter(submission=submission, workload=w, index=chosen).values_list("code", flat=True).first()
        code_html = highlighted(code) if code is not None else None
    chosen_share = next((x for x in samples if x["index"] == chosen), {}).get("outside_pallas")
    return render(request, "leaderboard/trace.html", {
        "s": submission, "w": w, "samples": samples, "lineage": lineage, "best_index": best_index,
        "chosen": chosen, "chosen_share": chosen_share, "code_html": code_html, "result": result,
        "pygments_css": STYLE_DEFS,
    })


def compare(request):
    """2 to 4 submissions side by side: fast@N curves, per-workload speedups and the table."""
    ids = []
    for v in request.GET.getlist("s"):
        try:
            ids.append(int(v))
        except ValueError:
            raise Http404("bad submission id")
    ids = list(dict.fromkeys(ids))
    wset = request.GET.get("set") if request.GET.get("set") in SET_NAMES else "all"
    ctx = {"ids": ids, "wset": wset, "sets": SET_LABELS}
    if not 2 <= len(ids) <= 4:
        ctx["error"] = "Choose 2 to 4 submissions to compare." if ids else None
        return render(request, "leaderboard/compare.html", ctx, status=400 if ids else 200)
    subs = {s.pk: s for s in Submission.objects.visible_to(request.user).select_related("team", "hardware")
            .filter(pk__in=ids)}
    if len(subs) != len(ids):
        raise Http404("submission not found")
    members = set_members()
    wids = [w["wid"] for w in members[wset]]
    columns, curves, series = [], [], []
    for pk in ids:
        s = subs[pk]
        evaluated, reported = summaries_of(s)
        summ = evaluated if evaluated is not None and evaluated.n_samples else (reported or evaluated)
        label = f"#{s.pk} {s.team.name} · {s.method}"
        col = {"s": s, "label": label, "summary": summ, "values": None, "best": {}}
        if summ is not None:
            c = unpack_curves(getattr(summ, f"curves_{wset}"))
            size = len(members[wset])
            col["values"] = set_values(c, size)
            col["best"] = summ.best or {}
            if size and len(c["fast"]):
                curves.append((label, [x / size for x in c["fast"]]))
        series.append({"label": label, "best": col["best"]})
        columns.append(col)
    table = [{"wid": wid, "cells": [{"attempted": wid in col["best"], "speedup": col["best"].get(wid)}
                                    for col in columns]} for wid in wids]
    fmt = wants_export(request)
    if fmt:
        rows = []
        for col in columns:
            summ = col["summary"]
            for wid in wids:
                rows.append({"submission": col["s"].pk, "team": col["s"].team.name, "method": col["s"].method,
                             "model": col["s"].model_name, "hardware": col["s"].hardware.slug, "workload": wid,
                             "best_speedup": col["best"].get(wid),
                             "provenance": summ.provenance if summ else "pending",
                             "jax_version": ", ".join(summ.jax_versions) if summ else "",
                             "harness_version": ", ".join(summ.harness_versions) if summ else ""})
        meta = {"submissions": ", ".join(str(i) for i in ids), "workload_set": wset,
                "hardware": ", ".join(sorted({c["s"].hardware.slug for c in columns}))}
        return export_response(fmt, "compare-" + "-".join(str(i) for i in ids), meta, rows,
                               ["submission", "team", "method", "model", "hardware", "workload", "best_speedup",
                                "provenance", "jax_version", "harness_version"],
                               extra={"summaries": [{"submission": c["s"].pk, **(c["values"] or {})} for c in columns]})
    ctx.update({
        "columns": columns, "table": table,
        "figures": [
            {"id": "fig-fast", "figure": charts.fast_curves(fast_curve_series(curves),
                                                            title=f"fast@N on {SET_LABELS[wset]}")},
            {"id": "fig-scatter", "figure": charts.speedup_scatter(series, wids)},
        ],
        "set_tabs": [(k, v, "?" + "&".join(f"s={i}" for i in ids) + f"&set={k}") for k, v in SET_LABELS.items()],
        "qs": "&".join(f"s={i}" for i in ids) + f"&set={wset}",
    })
    return render(request, "leaderboard/compare.html", ctx)
