"""Which of a submission's results were measured under an earlier workload version or an
earlier harness.

The aggregates fold only each workload's current version measured under the current harness
(``evaluator.models.current_versions``); the rows of earlier versions are kept, and this module
lists them beside the current ones: the submission page's "earlier versions" table, its note ("3
of 6 workloads evaluated under an earlier version", "... under an earlier harness"), the API and
the exports. One query when there is nothing earlier (the usual case), three otherwise.
"""

from __future__ import annotations

from django.db.models import Count, F, Max, Q

from evaluator.models import Evaluation, current_harness_version, current_versions
from jaxbench import metrics
from leaderboard.models import SubmissionSummary
from submissions.models import Candidate, Submission

_CORRECT = Q(outcome__in=list(metrics.CORRECT_OUTCOMES))
# held verdicts count nowhere until accepted (TRUST.md 6)
_RANKED = Q(review__in=(Evaluation.REVIEW_NONE, Evaluation.ACCEPTED))
_FINAL = Q(state=Evaluation.DONE, stage=Evaluation.MAIN) | Q(state=Evaluation.SKIPPED)


def _groups(qs):
    return (
        qs.filter(_FINAL)
        .values("candidate__workload__wid", "candidate__workload__number", "workload_version", "harness_version")
        .annotate(
            n=Count("id"),
            n_correct=Count("id", filter=_CORRECT & _RANKED),
            best=Max("speedup", filter=_CORRECT & _RANKED),
            current=F("candidate__workload__version"),
        )
        .order_by("candidate__workload__level", "candidate__workload__number", "workload_version", "harness_version")
    )


def _note(total: int, by_version: int, by_harness: int, rescored: int) -> str:
    """ "3 of 6 workloads evaluated under an earlier version", "2 of 6 ... under an earlier
    harness", or both ("3 of 6 ... earlier version, 2 under an earlier harness"), with how many
    were re-scored under the current ones."""
    parts = []
    if by_version:
        parts.append(f"{by_version} of {total} workloads evaluated under an earlier version")
    if by_harness:
        parts.append(
            f"{by_harness} under an earlier harness"
            if parts
            else f"{by_harness} of {total} workloads evaluated under an earlier harness"
        )
    note = ", ".join(parts)
    if rescored:
        current = "one" if not by_harness else "harness" if not by_version else "versions"
        note += f" ({rescored} re-scored under the current {current})"
    return note


def earlier_versions(submission) -> dict:
    """``{"earlier": k, "earlier_version": kv, "earlier_harness": kh, "workloads": n, "rescored":
    m, "note": str, "rows": [...]}``: k workloads with results of an earlier version (kv of an
    earlier workload version, kh of the current one under an earlier harness); ``rows``: one per
    (workload, earlier workload version, harness version) with its samples, correct samples and
    best speedup, and the same figures under the current versions when it was re-scored (else
    None). ``None``: the empty answer, without a query (the summaries say there is nothing
    earlier)."""
    empty = {
        "earlier": 0,
        "earlier_version": 0,
        "earlier_harness": 0,
        "workloads": None,
        "rescored": 0,
        "note": "",
        "rows": [],
    }
    if submission is None:
        return empty
    mine = Evaluation.objects.filter(candidate__submission=submission)
    old = list(_groups(mine.exclude(current_versions())))
    if not old:
        return empty
    wids = sorted({r["candidate__workload__wid"] for r in old})
    by_version = {r["candidate__workload__wid"] for r in old if r["workload_version"] != r["current"]}
    by_harness = {r["candidate__workload__wid"] for r in old} - by_version
    now = {
        r["candidate__workload__wid"]: r
        for r in _groups(mine.filter(current_versions(), candidate__workload__wid__in=wids))
    }
    total = Candidate.objects.filter(submission=submission).values("workload_id").distinct().count()
    harness = current_harness_version()
    rows = []
    for r in old:
        cur = now.get(r["candidate__workload__wid"])
        rows.append(
            {
                "workload": r["candidate__workload__wid"],
                "version": r["workload_version"],
                "current_version": r["current"],
                "harness_version": r["harness_version"],
                "current_harness_version": harness,
                "n_samples": r["n"],
                "n_correct": r["n_correct"],
                "best_speedup": r["best"],
                "current": None
                if cur is None
                else {"n_samples": cur["n"], "n_correct": cur["n_correct"], "best_speedup": cur["best"]},
            }
        )
    rescored = len(now)
    return {
        "earlier": len(wids),
        "earlier_version": len(by_version),
        "earlier_harness": len(by_harness),
        "workloads": total,
        "rescored": rescored,
        "note": _note(total, len(by_version), len(by_harness), rescored),
        "rows": rows,
    }


def parse_versions(value: str | None, current: int) -> str | int | None:
    """A workload page's ``?versions=`` filter: ``"all"`` (every earlier workload version, and
    the current one's results under an earlier harness), an earlier version number, or None (the
    default: the current versions only, nothing more to list)."""
    if not value:
        return None
    if value == "all":
        return "all"
    try:
        v = int(value)
    except ValueError:
        return None
    return v if 1 <= v != current else None


def earlier_results(workload, versions: str | int | None) -> list[dict]:
    """Public submissions' results on ``workload`` under earlier versions (``parse_versions``):
    per hardware target, submission, workload version and harness version, samples, correct
    samples and the best speedup, from the evaluations themselves (never folded into the
    aggregates). One query, only when asked for."""
    if versions is None:
        return []
    # only submissions whose summaries hold results of an earlier version (the board's version
    # filter reads the same mark, board_versions.recompute): without it, PostgreSQL scanned every
    # evaluation of the database for the few not of the current versions (0.25 s at 1.4 M rows)
    earlier = Submission.objects.public().filter(
        summaries__source=SubmissionSummary.EVALUATED, summaries__earlier_versions__gt=0
    )
    qs = Evaluation.objects.filter(
        _FINAL, candidate__workload=workload, candidate__submission__in=earlier.values("pk")
    ).exclude(workload_version=workload.version, harness_version=current_harness_version())
    if versions != "all":
        qs = qs.filter(workload_version=versions)
    rows = (
        qs.values(
            "hardware__slug",
            "candidate__submission_id",
            "candidate__submission__team__name",
            "candidate__submission__method",
            "workload_version",
            "harness_version",
        )
        .annotate(
            n=Count("id"),
            n_correct=Count("id", filter=_CORRECT & _RANKED),
            best=Max("speedup", filter=_CORRECT & _RANKED),
        )
        .order_by(
            "hardware__slug",
            "-workload_version",
            "-harness_version",
            F("best").desc(nulls_last=True),
            "candidate__submission_id",
        )
    )
    return [
        {
            "hardware": r["hardware__slug"],
            "submission": r["candidate__submission_id"],
            "team": r["candidate__submission__team__name"],
            "method": r["candidate__submission__method"],
            "version": r["workload_version"],
            "harness_version": r["harness_version"],
            "n_samples": r["n"],
            "n_correct": r["n_correct"],
            "best_speedup": r["best"],
        }
        for r in rows
    ]
