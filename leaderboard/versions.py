"""Which of a submission's results were measured under an earlier workload version.

The aggregates fold only each workload's current version (leaderboard.aggregates.samples); the
rows of earlier versions are kept, and this module lists them beside the current ones: the
submission page's "earlier versions" table, its note ("3 of 6 workloads evaluated under an
earlier version"), the API and the exports. One query when there is nothing earlier (the usual
case), three otherwise.
"""

from __future__ import annotations

from django.db.models import Count, F, Max, Q

from evaluator.models import Evaluation
from jaxbench import metrics
from submissions.models import Candidate, Submission

_CORRECT = Q(outcome__in=list(metrics.CORRECT_OUTCOMES))
# held verdicts count nowhere until accepted (TRUST.md 6)
_RANKED = Q(review__in=(Evaluation.REVIEW_NONE, Evaluation.ACCEPTED))
_FINAL = Q(state=Evaluation.DONE, stage=Evaluation.MAIN) | Q(state=Evaluation.SKIPPED)


def _groups(qs):
    return (
        qs.filter(_FINAL)
        .values("candidate__workload__wid", "candidate__workload__number", "workload_version")
        .annotate(
            n=Count("id"),
            n_correct=Count("id", filter=_CORRECT & _RANKED),
            best=Max("speedup", filter=_CORRECT & _RANKED),
            current=F("candidate__workload__version"),
        )
        .order_by("candidate__workload__number", "workload_version")
    )


def earlier_versions(submission) -> dict:
    """``{"earlier": k, "workloads": n, "rescored": m, "note": str, "rows": [...]}``; ``rows``:
    one per (workload, earlier version) with its samples, correct samples and best speedup, and
    the same figures under the current version when it was re-scored (else None). ``None``:
    the empty answer, without a query (the summaries say there is nothing earlier)."""
    if submission is None:
        return {"earlier": 0, "workloads": None, "rescored": 0, "note": "", "rows": []}
    mine = Evaluation.objects.filter(candidate__submission=submission)
    old = list(_groups(mine.exclude(workload_version=F("candidate__workload__version"))))
    if not old:
        return {"earlier": 0, "workloads": None, "rescored": 0, "note": "", "rows": []}
    wids = sorted({r["candidate__workload__wid"] for r in old})
    now = {
        r["candidate__workload__wid"]: r
        for r in _groups(
            mine.filter(workload_version=F("candidate__workload__version"), candidate__workload__wid__in=wids)
        )
    }
    total = Candidate.objects.filter(submission=submission).values("workload_id").distinct().count()
    rows = []
    for r in old:
        cur = now.get(r["candidate__workload__wid"])
        rows.append(
            {
                "workload": r["candidate__workload__wid"],
                "version": r["workload_version"],
                "current_version": r["current"],
                "n_samples": r["n"],
                "n_correct": r["n_correct"],
                "best_speedup": r["best"],
                "current": None
                if cur is None
                else {"n_samples": cur["n"], "n_correct": cur["n_correct"], "best_speedup": cur["best"]},
            }
        )
    rescored = len(now)
    note = f"{len(wids)} of {total} workloads evaluated under an earlier version"
    if rescored:
        note += f" ({rescored} re-scored under the current one)"
    return {"earlier": len(wids), "workloads": total, "rescored": rescored, "note": note, "rows": rows}


def parse_versions(value: str | None, current: int) -> str | int | None:
    """The ``?versions=`` filter: ``"all"`` (every earlier version), a version number, or None
    (the default: the current version only, nothing more to list)."""
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
    per hardware target, submission and version, samples, correct samples and the best speedup,
    from the evaluations themselves (never folded into the aggregates). One query, only when
    asked for."""
    if versions is None:
        return []
    qs = Evaluation.objects.filter(
        _FINAL, candidate__workload=workload, candidate__submission__in=Submission.objects.public()
    ).exclude(workload_version=workload.version)
    if versions != "all":
        qs = qs.filter(workload_version=versions)
    rows = (
        qs.values(
            "hardware__slug",
            "candidate__submission_id",
            "candidate__submission__team__name",
            "candidate__submission__method",
            "workload_version",
        )
        .annotate(
            n=Count("id"),
            n_correct=Count("id", filter=_CORRECT & _RANKED),
            best=Max("speedup", filter=_CORRECT & _RANKED),
        )
        .order_by("hardware__slug", "-workload_version", F("best").desc(nulls_last=True), "candidate__submission_id")
    )
    return [
        {
            "hardware": r["hardware__slug"],
            "submission": r["candidate__submission_id"],
            "team": r["candidate__submission__team__name"],
            "method": r["candidate__submission__method"],
            "version": r["workload_version"],
            "n_samples": r["n"],
            "n_correct": r["n_correct"],
            "best_speedup": r["best"],
        }
        for r in rows
    ]
