"""A submission's page (``/submissions/<pk>/``) and its live progress
(``/submissions/<pk>/progress.json``); with ``?workload=12p`` the page is the trace view."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import Count, Max
from django.http import JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from catalog.models import ExpertReference
from jaxbench import metrics
from jaxbench.metrics.curves import set_values, unpack_curves, with_upstream
from jaxbench.workloads.sets import SET_LABELS, SET_NAMES
from leaderboard import charts
from leaderboard.data import cache_key, set_members
from leaderboard.highlight import STYLE_DEFS
from leaderboard.shown_sources import best_candidates
from leaderboard.submission_state import INFRASTRUCTURE, FirstFailure, state_from_progress
from leaderboard.submission_state_query import held_results
from leaderboard.versions import earlier_versions
from leaderboard.views.exports import export_response, wants_export
from leaderboard.views.submission_rows import (
    EXPORT_FAILURES,
    best_sources,
    can_manage,
    can_view_code,
    failed_samples,
    failure_message,
    first_failures,
    mark_outside_pallas,
    progress_for,
    summaries_of,
    visible_submission,
    workload_rows,
)
from leaderboard.views.submission_run_logs import OUTPUT_CAP, submission_run_logs
from leaderboard.views.table_rows import failure_rows, workload_table_rows
from leaderboard.views.trace import trace_view

# --------------------------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------------------------


def submission_detail(request, pk):
    submission = visible_submission(request, pk)
    if request.GET.get("workload"):
        return trace_view(request, submission)
    evaluated, reported = summaries_of(submission)
    # Only what this portal measured stands where verdicts stand; a trace's own claims (the
    # self-reported summary) are shown apart, labelled, never in their place (issue: item 2).
    primary = evaluated
    hw = submission.hardware
    fmt = wants_export(request)
    meta = {
        "submission": submission.pk,
        "team": submission.team.name,
        "method": submission.method,
        "model": submission.model_name,
        "hardware": hw.slug,
        "kind": submission.kind,
        "sampling": submission.sampling,
        "provenance": primary.provenance if primary and primary.n_samples else "not measured yet",
        "jax_versions": ", ".join(primary.jax_versions) if primary else "",
        "harness_versions": ", ".join(primary.harness_versions) if primary else "",
    }
    # one more query only where the summaries say there is something earlier to list
    versions = (
        earlier_versions(submission)
        if any(s is not None and s.earlier_versions for s in (evaluated, reported))
        else earlier_versions(None)
    )
    meta["workload_versions"] = (
        versions["note"] or "every workload evaluated under its current version and the current harness"
    )
    if fmt:
        cols = [
            "wid",
            "title",
            "outcome",
            "n_samples",
            "n_correct",
            "n_tie",
            "best_speedup",
            "best_low",
            "best_high",
            "best_before_intervals",
            "best_index",
            "first_correct_index",
            "first_faster_index",
            "expert_speedup",
            "gap",
            "floored_gap",
            "message",
        ]
        rows = workload_rows(submission, primary)
        # a workload's message: why its first failed sample failed (two small queries)
        first = first_failures(submission)
        for r in rows:
            r["message"] = failure_message(first[r["wid"]]) if r["wid"] in first else ""
        # the best samples' share outside Pallas and, per multi-configuration workload, configurations
        mark_outside_pallas(submission, rows, best_candidates(submission, rows))
        cols.append("outside_pallas")
        extra = None
        if fmt == "json":  # a CSV holds the rows only
            # The first EXPORT_FAILURES failed samples, in workload and sample order; past them the
            # API's paginated list of the submission's evaluations. Listing all of a 7,200-sample
            # trace's (6,045: 0.8 MB, a read of every row) put the export over 100 ms, and a
            # larger trace would go further: an export's size is bounded, the API pages.
            failures, more = failed_samples(submission, EXPORT_FAILURES, rows, heads=False)
            extra = {
                "sets": primary.sets if primary else {},
                "earlier_versions": versions["rows"],
                "configurations": {r["wid"]: r["configurations"] for r in rows if r["configurations"]},
                "failures": [
                    {k: f[k] for k in ("wid", "index", "outcome", "category", "message", "where")} for f in failures
                ],
                "failures_more": more,
                "failures_rest": reverse("api-submission-evaluations", args=[submission.pk]) if more else None,
                # the page's own state (its progress, the summary's counts once settled: no
                # count of every row), with the first failure the rows' messages come from
                "state": state_from_progress(progress_for(submission, evaluated), _first(first)).as_dict(),
                "claimed_by_agent": claimed_export(reported),
            }
        return export_response(fmt, f"submission-{submission.pk}-{hw.slug}", meta, rows, cols, extra=extra)
    progress = progress_for(submission, evaluated)
    state = state_from_progress(progress)  # no query more: the progress has every count
    code = can_view_code(request.user, submission)
    key = cache_key(
        "sub",
        submission.pk,
        submission.published_at,
        submission.withdrawn_at,
        code,
        *(f"{s.pk}@{s.updated_at.isoformat()}" if s else "-" for s in (evaluated, reported)),
        expert_stamp(hw),
    )
    body = cache.get(key)
    rows = None
    if body is None:
        rows = workload_rows(submission, primary)
        body = _render_body(submission, evaluated, reported, primary, rows, code)
        cache.set(key, body, 3600)
    ctx = {
        "s": submission,
        "evaluated": evaluated,
        "reported": reported,
        "primary": primary,
        "progress": progress,
        "meta": meta,
        "rows": rows,
        "body": mark_safe(body["html"]),
        "has_figures": body["has_figures"],
        "sources": body["has_sources"] or None,
        "can_manage": can_manage(request.user, submission),
        "state": state,
        # held means held (TRUST.md 6): listed without their speedups publicly (the team sees
        # them while the submission is private); one query, only when any
        "held": held_results(
            [submission.pk], with_speed=can_manage(request.user, submission) and not submission.is_public
        ).get(submission.pk, [])
        if progress.get("held") or state.n_held
        else [],
        "pygments_css": STYLE_DEFS,
        "versions": versions,
    }
    return render(request, "leaderboard/submission_detail.html", ctx)


def _first(first: dict[str, dict]) -> FirstFailure | None:
    """The submission's first failed sample (in workload order) among ``first_failures``'."""
    f = next(iter(first.values()), None)
    return FirstFailure(f["wid"], f["index"], f["outcome"] or INFRASTRUCTURE, f["message"]) if f else None


def claimed_export(reported) -> dict | None:
    """The trace's own claims (self-reported by the agent, not measured here), apart from every
    measured figure; None when the upload claims nothing."""
    if reported is None:
        return None
    return {
        "note": "self-reported by the agent in its trace; not measured by this portal",
        "samples": reported.n_samples,
        "per_sample_correctness": reported.per_sample_correctness,
        "solved_all": reported.solved_all,
        "floored_geomean_all": reported.geomean_all,
        "counts": {o: n for o, n in reported.counts.items() if n},
    }


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
            if not size:  # a level without workloads yet
                continue
            v = with_upstream(set_values(c, size), getattr(primary, f"attempted_{name}"))
            sets.append(dict(v, key=name, label=SET_LABELS[name]))
            if size and len(c["fast"]):
                curves.append(
                    {
                        "label": SET_LABELS[name],
                        "n": list(range(1, len(c["fast"]) + 1)),
                        "fast": [x / size for x in c["fast"]],
                    }
                )
        if curves:
            figures.append({"id": "fig-fast", "figure": charts.fast_curves(curves, title="fast@N by workload set")})
        figures.append(
            {"id": "fig-outcomes", "figure": charts.outcome_breakdown(primary.counts, title="Outcomes of all samples")}
        )
        gaps = [{"label": r["wid"], "value": r["gap"]} for r in rows if r["expert_workload"] and r["gap"] is not None]
        if gaps:
            figures.append(
                {
                    "id": "fig-gap",
                    "figure": charts.expert_gap_bars(
                        gaps, per_workload=True, title="Gap to expert per workload (best / expert, unfloored)"
                    ),
                }
            )
    best = best_candidates(submission, rows)
    sources = best_sources(submission, best) if code else None
    mark_outside_pallas(submission, rows, best)
    failures, more_failures = failed_samples(submission, rows=rows)
    run_logs, more_run_logs = submission_run_logs(submission)
    html = render_to_string(
        "leaderboard/_submission_body.html",
        {
            "s": submission,
            "evaluated": evaluated,
            "reported": reported,
            "primary": primary,
            "rows": rows,
            "sets": sets,
            "figures": figures,
            "sources": sources,
            "outcomes": metrics.OUTCOMES,
            "failures": failures,
            "more_failures": more_failures,
            "run_logs": run_logs,
            "more_run_logs": more_run_logs,
            "run_log_cap": OUTPUT_CAP,
            # built in Python: up to 200 and 50+ rows
            "failure_rows": failure_rows(failures),
            "workload_table_rows": workload_table_rows(rows, submission.kind == submission.TRACE),
            "has_configurations": any(r.get("configurations") for r in rows),
        },
    )
    return {"html": html, "has_figures": bool(figures), "has_sources": bool(sources)}


def progress_json(request, pk):
    submission = visible_submission(request, pk)
    evaluated, _ = summaries_of(submission)
    return JsonResponse(progress_for(submission, evaluated))
