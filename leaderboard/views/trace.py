"""The trace view of one workload of a submission (``/submissions/<pk>/?workload=12p``): every
sample in order, the best kernel's lineage and the chosen sample's source. The agent's own
claims (``reported_*`` of a candidate) sit in their own labelled column, never in the measured
ones: a sample without a verdict says "not measured yet"."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render

from catalog.lookup import find_workload
from evaluator.models import Evaluation
from jaxbench.record import format_speedup
from jaxbench.verdict import pallas_share
from jaxbench.verdict import review as review_rules
from leaderboard.aggregates.samples import counts_for_candidate
from leaderboard.configurations import rows as configuration_rows
from leaderboard.highlight import STYLE_DEFS, highlighted
from leaderboard.models import WorkloadResult
from leaderboard.views.exports import export_response, wants_export
from leaderboard.views.submission_rows import can_view_code, summaries_of
from submissions.models import Candidate


def _find_workload(value: str):
    w = find_workload(value)
    if w is None:
        raise Http404("unknown workload")
    return w


def trace_view(request, submission):
    """Every sample of one workload in order: outcome, speedup, error message; the lineage of
    the best kernel; the source of the chosen sample."""
    w = _find_workload(request.GET["workload"])
    cands = list(
        Candidate.objects.filter(submission=submission, workload=w)
        .order_by("index")
        .values(
            "id",
            "index",
            "round",
            "parent_index",
            "filename",
            "reported_outcome",
            "reported_speedup",
            "reported_speedup_lo",
            "reported_speedup_hi",
            "tokens_in",
            "tokens_out",
            "cost_usd",
        )
    )
    if not cands:
        raise Http404("no samples for this workload")
    by_cand: dict[int, dict] = {}
    for ev in Evaluation.objects.filter(candidate_id__in=[c["id"] for c in cands], hardware=submission.hardware).values(
        "candidate_id",
        "stage",
        "state",
        "outcome",
        "speedup",
        "speedup_lo",
        "speedup_hi",
        "message",
        "record__pallas_share",
        "record__timing__median_s",
        "record__timing__spread",
        "review",
    ):
        if review_rules.is_held(ev["review"]):  # held means held: no speedup shown until accepted
            ev = dict(ev, outcome=review_rules.HELD_OUTCOME, speedup=None, speedup_lo=None, speedup_hi=None)
            ev["record__timing__median_s"] = ev["record__timing__spread"] = None  # its time would tell the speedup
            ev["message"] = review_rules.HELD_LABEL
        cur = by_cand.get(ev["candidate_id"])
        counts = counts_for_candidate(ev["stage"], ev["state"])
        if counts and (cur is None or not cur["_counts"] or cur["stage"] == Evaluation.PRECHECK):
            by_cand[ev["candidate_id"]] = dict(ev, _counts=True)
        elif cur is None:
            by_cand[ev["candidate_id"]] = dict(ev, _counts=False)
    # only what this portal measured: a trace's own claims (its self-reported summary) never
    # stand in for a verdict, not even before the first one arrives
    evaluated, _ = summaries_of(submission)
    result = WorkloadResult.objects.filter(summary=evaluated, workload=w).first() if evaluated is not None else None
    if result is not None and not result.n_samples:
        result = None
    samples = []
    for c in cands:
        ev = by_cand.get(c["id"])
        samples.append(
            {
                "index": c["index"],
                "round": c["round"],
                "parent_index": c["parent_index"],
                "filename": c["filename"],
                "state": ev["state"] if ev else "not scheduled",
                "stage": ev["stage"] if ev else "",
                "outcome": ev["outcome"] if ev and ev["_counts"] else "",
                "speedup": ev["speedup"] if ev and ev["_counts"] else None,
                "speedup_lo": ev["speedup_lo"] if ev and ev["_counts"] else None,
                "speedup_hi": ev["speedup_hi"] if ev and ev["_counts"] else None,
                "speedup_text": format_speedup(ev["speedup"], ev["speedup_lo"], ev["speedup_hi"])
                if ev and ev["_counts"] and ev["speedup"] is not None
                else "",
                "before_intervals": bool(
                    ev and ev["_counts"] and ev["speedup"] is not None and ev["speedup_lo"] is None
                ),
                "message": (ev["message"] or "")[:2000] if ev else "",
                "outside_pallas": pallas_share.short(ev["record__pallas_share"]) if ev else "",
                "outside_pallas_where": pallas_share.largest(ev["record__pallas_share"]) if ev else "",
                # the sample's time ± spread beside its verdict
                "median_s": ev["record__timing__median_s"] if ev and ev["_counts"] else None,
                "spread": ev["record__timing__spread"] if ev and ev["_counts"] else None,
                # the agent's own claim for this sample, in its own labelled column and export
                # fields (claimed_*), never in the measured ones
                "claimed_outcome": c["reported_outcome"],
                "claimed_speedup": c["reported_speedup"],
                "claimed_speedup_lo": c["reported_speedup_lo"],
                "claimed_speedup_hi": c["reported_speedup_hi"],
                "claimed_text": format_speedup(
                    c["reported_speedup"], c["reported_speedup_lo"], c["reported_speedup_hi"]
                )
                if c["reported_speedup"] is not None
                else "",
                "tokens": ((c["tokens_in"] or 0) + (c["tokens_out"] or 0))
                if c["tokens_in"] is not None or c["tokens_out"] is not None
                else None,
                "cost_usd": c["cost_usd"],
            }
        )
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
        meta = {
            "submission": submission.pk,
            "workload": w.wid,
            "hardware": submission.hardware.slug,
            "jax_versions": ", ".join(evaluated.jax_versions) if evaluated else "",
            "harness_versions": ", ".join(evaluated.harness_versions) if evaluated else "",
        }
        cols = [
            "index",
            "round",
            "parent_index",
            "state",
            "outcome",
            "speedup",
            "speedup_lo",
            "speedup_hi",
            "message",
            "claimed_outcome",
            "claimed_speedup",
            "claimed_speedup_lo",
            "claimed_speedup_hi",
            "tokens",
            "cost_usd",
        ]
        return export_response(
            fmt,
            f"submission-{submission.pk}-{w.wid}-samples",
            meta,
            samples,
            cols,
            extra={
                "lineage_of_best": lineage,
                "claimed_fields": "claimed_*: self-reported by the agent in its trace, not measured by this portal",
            },
        )
    try:
        chosen = int(request.GET.get("sample", best_index if best_index is not None else cands[0]["index"]))
    except ValueError:
        chosen = cands[0]["index"]
    code_html = None
    if can_view_code(request.user, submission):
        code = (
            Candidate.objects.filter(submission=submission, workload=w, index=chosen)
            .values_list("code", flat=True)
            .first()
        )
        code_html = highlighted(code) if code is not None else None
    chosen_share = next((x for x in samples if x["index"] == chosen), {}).get("outside_pallas")
    # a multi-configuration workload: the chosen sample's configurations (one query, only then)
    chosen_configurations = []
    if w.configurations:
        rec = (
            Evaluation.objects.filter(
                candidate__submission=submission,
                candidate__workload=w,
                candidate__index=chosen,
                hardware=submission.hardware,
                stage=Evaluation.MAIN,
            )
            .values_list("record__configurations", "review")
            .first()
        )
        if rec is not None:
            held = review_rules.public_record({"configurations": rec[0]}, rec[1])  # held means held
            chosen_configurations = configuration_rows(held.get("configurations"), w.costs, submission.hardware.slug)
    return render(
        request,
        "leaderboard/trace.html",
        {
            "s": submission,
            "w": w,
            "samples": samples,
            "lineage": lineage,
            "best_index": best_index,
            "chosen": chosen,
            "chosen_share": chosen_share,
            "chosen_configurations": chosen_configurations,
            "code_html": code_html,
            "result": result,
            "pygments_css": STYLE_DEFS,
        },
    )
