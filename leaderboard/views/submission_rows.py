"""What a submission's pages show: who may see it, its summaries, its progress, the
per-workload rows and the sources of its best samples."""

from __future__ import annotations

from django.db.models import Min, Q
from django.db.models.fields.json import KT
from django.shortcuts import get_object_or_404

from catalog.models import Baseline, Workload
from evaluator.models import Evaluation, current_harness_version, current_versions
from evaluator.progress import ACCELERATOR_OVERHEAD_S, submission_progress
from jaxbench import metrics
from jaxbench.record import CORRECT_OUTCOMES, Outcome, message_head, message_where
from jaxbench.verdict import pallas_share
from jaxbench.verdict import review as review_rules
from leaderboard.configurations import rows as configuration_rows
from leaderboard.data import experts_for
from leaderboard.highlight import highlighted_many
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.shown_sources import shown_candidates
from leaderboard.submission_state_query import held_counts
from submissions.models import Submission

MAX_FAILURES = 200  # failed samples listed on the page; the rest are in the per-workload views
EXPORT_FAILURES = 1000  # ... and in the JSON export; the rest are in the API's evaluations list


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def visible_submission(request, pk):
    return get_object_or_404(Submission.objects.visible_to(request.user).select_related("team", "hardware"), pk=pk)


def can_manage(user, submission) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    # asked up to three times per page: one membership query, remembered on the instance
    memo = submission.__dict__.setdefault("_members_memo", {})
    if user.pk not in memo:
        memo[user.pk] = submission.team.is_member(user)
    return memo[user.pk]


def can_view_code(user, submission) -> bool:
    """Kernel sources: for published submissions, and always for team members and staff."""
    return submission.is_public or can_manage(user, submission)


def summaries_of(submission) -> tuple[SubmissionSummary | None, SubmissionSummary | None]:
    """(evaluated summary on the submission's hardware, self-reported summary)."""
    evaluated = reported = None
    for s in SubmissionSummary.shown(submission):
        if s.source == SubmissionSummary.REPORTED:
            reported = s
        else:
            evaluated = s
    return evaluated, reported


def _estimated_saved_seconds(hardware, stopped_by_workload: dict[int, int]) -> float | None:
    if not stopped_by_workload or not hardware.is_accelerator:
        return None
    medians = dict(
        Baseline.objects.filter(hardware=hardware, workload_id__in=list(stopped_by_workload)).values_list(
            "workload_id", "median_s"
        )
    )
    return round(
        sum(n * (ACCELERATOR_OVERHEAD_S + 60 * medians.get(w, 0.0)) for w, n in stopped_by_workload.items()), 1
    )


def progress_for(submission, summary: SubmissionSummary | None) -> dict:
    """evaluator.progress.submission_progress while work is in flight; from the summary row
    once every candidate has its final outcome (no scan of the evaluations): a complete
    summary, or one whose candidates are all folded into it or held for review (a held verdict
    is never folded), as ``submission_state_query`` reads a settled submission's state."""
    held = 0
    if summary is None:
        return submission_progress(submission)
    if not summary.complete:
        # Counting the rows of a 7,200-sample submission with two held verdicts took 80 ms of
        # its private page (load benchmark, SQLite); the held rows' count, one indexed query.
        if not _settled_with_held(submission, summary):
            return submission_progress(submission)
        held = held_counts([submission.pk]).get(submission.pk, 0)
        if summary.n_samples + held != summary.candidates_total:
            return submission_progress(submission)
    stopped = dict(
        WorkloadResult.objects.filter(summary=summary, precheck_stopped__gt=0).values_list(
            "workload_id", "precheck_stopped"
        )
    )
    outcomes = {o: n for o, n in summary.counts.items() if n}
    if held:
        outcomes[review_rules.HELD_OUTCOME] = held
    return {
        "total": summary.candidates_total,
        "done": summary.n_samples + held,
        "finished": True,
        "percent": 100.0,
        "stages": None,
        "outcomes": outcomes,
        "held": held,
        "waiting_for": None,
        "precheck_saved": {
            "candidates": summary.precheck_stopped,
            "estimated_accelerator_seconds": _estimated_saved_seconds(submission.hardware, stopped),
        },
        "queue": None,
    }


def _settled_with_held(submission, summary: SubmissionSummary) -> bool:
    """Whether ``summary`` (incomplete) may still answer for every candidate once the held ones
    are counted: the evaluated summary of the submission's hardware, with nothing of an earlier
    workload version or harness (``submission_state_query._settled``'s conditions)."""
    return (
        summary.source == SubmissionSummary.EVALUATED
        and summary.hardware_id == submission.hardware_id
        and summary.candidates_total > 0
        and not summary.earlier_versions
        and set(summary.harness_versions or ()) <= {current_harness_version()}
    )


# what a row reads of a WorkloadResult and of its workload (not the folded indexes, intervals
# and curves of every sample, nor the workload's source and shapes: most of their bytes)
_ROW_FIELDS = (
    "workload_id",
    "aggregate",
    "best_low",
    "best_high",
    "best_before_intervals",
    "best_index",
    "first_correct_index",
    "first_faster_index",
    "precheck_stopped",
)
_ROW_WORKLOAD_FIELDS = ("wid", "slug", "title", "level", "number", "expert")


def workload_rows(submission, summary: SubmissionSummary | None, n: int | None = None) -> list[dict]:
    """Per-workload table: outcome, best speedup with interval, first correct / fast index,
    expert speedup and gap: ``gap`` the raw best / expert (unfloored, below 1 when slower than
    the expert), ``floored_gap`` the study's s_w / max(1, expert)."""
    experts = experts_for(submission.hardware)
    results = {}
    if summary is not None:
        results = {
            r.workload_id: r
            for r in WorkloadResult.objects.filter(summary=summary)
            .select_related("workload")
            .only(*_ROW_FIELDS, *(f"workload__{f}" for f in _ROW_WORKLOAD_FIELDS))
        }
    workloads = {r.workload_id: r.workload for r in results.values()}
    if summary is None or not summary.complete:
        # without the model's ordering (workload number, index), DISTINCT is over the workloads
        # alone: 50 rows, not every candidate (7,202 of a private trace, 80 ms on SQLite)
        pending = set(submission.candidates.order_by().values_list("workload_id", flat=True).distinct()) - set(
            workloads
        )
        workloads.update({w.pk: w for w in Workload.objects.filter(pk__in=pending).only(*_ROW_WORKLOAD_FIELDS)})
    mode = summary.mode if summary else metrics.SEQUENTIAL
    # a workload whose only verdicts are held for review shows that, not "pending" (a summary
    # with a held verdict is never complete: one query on the held rows' index, only then)
    held_workloads = (
        set(
            Evaluation.objects.filter(candidate__submission=submission, review=Evaluation.HELD).values_list(
                "candidate__workload_id", flat=True
            )
        )
        if summary is None or not summary.complete
        else set()
    )
    rows = []
    for w in sorted(workloads.values(), key=lambda w: (w.level, w.number)):
        r = results.get(w.pk)
        agg = r.agg if r else None
        e = experts.get(w.pk)
        expert_speedup = e["speedup"] if e else None
        s_w = metrics.workload_speedup(agg, n, mode)
        if (agg is None or agg.n_samples == 0) and w.pk in held_workloads:
            outcome = review_rules.HELD_OUTCOME
        elif agg is None or agg.n_samples == 0:
            outcome = "pending"
        elif agg.n_faster:
            outcome = Outcome.CORRECT_FASTER
        elif agg.count(Outcome.CORRECT_TIE):
            outcome = Outcome.CORRECT_TIE
        elif agg.n_correct:
            outcome = Outcome.CORRECT_SLOWER
        else:
            outcome = max(agg.outcome_counts.items(), key=lambda kv: kv[1])[0]
        rows.append(
            {
                "wid": w.wid,
                "workload_id": w.pk,
                "slug": w.slug,
                "title": w.title,
                "number": w.number,
                "expert_workload": w.expert,
                "outcome": outcome,
                "n_samples": agg.n_samples if agg else 0,
                "n_correct": agg.n_correct if agg else 0,
                "counts": agg.outcome_counts if agg else {},
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
                "gap": metrics.raw_expert_gaps([agg], [expert_speedup], n)[0] if e else None,
                "floored_gap": metrics.expert_gaps([agg], [expert_speedup], n, mode)[0] if e else None,
                "precheck_stopped": r.precheck_stopped if r else 0,
            }
        )
    return rows


def mark_outside_pallas(submission, rows, best: dict[int, int]) -> None:
    """Each row's best sample's share of FLOPs outside Pallas (its main evaluation's record),
    as ``outside_pallas`` ("3.0%") and ``outside_pallas_where`` (the largest outside op); and,
    for a multi-configuration workload, its per-configuration results (``configurations``); its
    time and timing spread (``median_s``, ``spread``: "time ± spread" beside the verdict)."""
    for r in rows:
        r["outside_pallas"], r["outside_pallas_where"], r["configurations"] = "", "", []
        r["median_s"] = r["spread"] = None
    if not best:
        return
    by_workload = {r["workload_id"]: r for r in rows}
    # by candidate id: the (candidate, hardware, stage) unique index answers it row by row
    for ev in Evaluation.objects.filter(
        candidate_id__in=list(best), hardware=submission.hardware, stage=Evaluation.MAIN
    ).values(
        "candidate_id",
        "record__pallas_share",
        "record__configurations",
        "candidate__workload__costs",
        "record__timing__median_s",
        "record__timing__spread",
    ):
        row = by_workload.get(best[ev["candidate_id"]])
        if row is not None:
            row["outside_pallas"] = pallas_share.short(ev["record__pallas_share"])
            row["outside_pallas_where"] = pallas_share.largest(ev["record__pallas_share"])
            row["median_s"], row["spread"] = ev["record__timing__median_s"], ev["record__timing__spread"]
            row["configurations"] = configuration_rows(
                ev["record__configurations"], ev["candidate__workload__costs"], submission.hardware.slug
            )


def best_sources(submission, best: dict[int, int]) -> list[dict]:
    """The kernels shown on the page (``shown_candidates``), highlighted."""
    shown = list(
        shown_candidates(submission, best)
        .select_related("workload")
        .only("index", "filename", "code", "code_sha256", "workload__wid")
    )
    html = highlighted_many((c.code_sha256, c.code) for c in shown)
    return [
        {
            "wid": c.workload.wid,
            "index": c.index,
            "filename": c.filename,
            "sha": c.code_sha256,
            "html": html[c.code_sha256],
        }
        for c in shown
    ]


def _failures(submission):
    """The failed or refused evaluations of ``submission``'s samples under the current versions:
    a main evaluation's verdict, or the pre-check's that stopped it (a queryset)."""
    return (
        Evaluation.objects.filter(candidate__submission=submission, hardware=submission.hardware)
        .filter(current_versions())
        .filter(
            Q(stage=Evaluation.MAIN, state=Evaluation.FAILED)
            | Q(stage=Evaluation.MAIN, state=Evaluation.DONE)
            | Q(stage=Evaluation.PRECHECK, state=Evaluation.SKIPPED)
        )
        .exclude(outcome__in=list(CORRECT_OUTCOMES))
    )


_FAILURE_FIELDS = (
    "candidate__workload__wid",
    "candidate__index",
    "candidate__filename",
    "stage",
    "state",
    "outcome",
    "message",
)
# the category as text (->> / json_extract), not a JSON value parsed again per row: the JSON
# export reads 6,045 failures of a 7,200-sample trace
_FAILURE_CATEGORY = {"record__error_category": KT("record__error_category")}
_FAILURE_ORDER = ("candidate__workload__level", "candidate__workload__number", "candidate__index")


def _failure(ev: dict, heads: bool = True) -> dict:
    message = ev["message"] or ""
    return {
        "wid": ev["candidate__workload__wid"],
        "index": ev["candidate__index"],
        "filename": ev["candidate__filename"],
        "outcome": ev["outcome"] or ("infrastructure" if ev["state"] == Evaluation.FAILED else ""),
        "category": ev["record__error_category"] or "",
        "precheck": ev["stage"] == Evaluation.PRECHECK,
        "head": message_head(message) if heads else None,
        "message": message,
        "where": message_where(message),
    }


def failure_message(f: dict) -> str:
    """A workload's message in the exports: why its first failed sample (``f``) failed."""
    return f"sample {f['index']}: {f['outcome']}: {message_head(f['message'])}"


def failed_samples(
    submission, limit: int | None = MAX_FAILURES, rows: list[dict] | None = None, *, heads: bool = True
) -> tuple[list[dict], bool]:
    """(up to ``limit`` failed or refused samples of the current versions with the reason each
    failed, whether there are more), in workload and sample order. A sample's outcome is its
    main evaluation's, or its pre-check's when that stopped it; an infrastructure failure counts
    with its message. Results of earlier versions are listed with those versions (``versions``).

    ``rows`` (the page's ``workload_rows``, in workload order): their failure counts size the
    batches of workloads asked for, so a page of a 7,200-sample trace reads the evaluations of
    the first workloads with failures, not of every sample. The counts only size the batches:
    the last batch takes every workload not asked yet, so nothing is left out (a page with
    fewer failures than ``limit`` asks once, for all of them). Without ``heads`` no message's
    first lines (``head``: None) are cut out (the JSON export's 6,045 failures have no use for them)."""
    qs = _failures(submission).order_by(*_FAILURE_ORDER).values(*_FAILURE_FIELDS, **_FAILURE_CATEGORY)
    if limit is None:
        found = list(qs)
    else:
        order = [(r["workload_id"], r["n_samples"] - r["n_correct"]) for r in rows or []]
        found, asked, i = [], [], 0
        while len(found) <= limit:
            need = limit + 1 - len(found)
            batch, expected = [], 0
            while i < len(order) and (not batch or expected < need):
                batch.append(order[i][0])
                expected += order[i][1]
                i += 1
            if i < len(order):
                found += qs.filter(candidate__workload_id__in=batch)[:need]
                asked += batch
            else:  # the last batch: every workload not asked yet, listed in the rows or not
                found += qs.exclude(candidate__workload_id__in=asked)[:need]
                break
    return [_failure(ev, heads) for ev in found[:limit]], limit is not None and len(found) > limit


def first_failures(submission) -> dict[str, dict]:
    """wid -> the first failed sample of each workload (``failed_samples``' form), in two small
    queries: the first index per workload, then those samples. The CSV export names only these;
    reading every failure of a 7,200-sample submission for them took 60 ms."""
    firsts = list(
        _failures(submission).values_list("candidate__workload_id").annotate(first=Min("candidate__index")).order_by()
    )
    if not firsts:
        return {}
    which = Q()
    for workload_id, index in firsts:
        which |= Q(candidate__workload_id=workload_id, candidate__index=index)
    out: dict[str, dict] = {}
    for ev in (
        _failures(submission).filter(which).order_by(*_FAILURE_ORDER).values(*_FAILURE_FIELDS, **_FAILURE_CATEGORY)
    ):
        out.setdefault(ev["candidate__workload__wid"], _failure(ev))
    return out
