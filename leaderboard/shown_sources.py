"""Which kernels a submission page shows: one definition, read by the page (to show them) and by
the intake, the fold of a finished evaluation and ``manage.py highlight_sources`` (to highlight
them ahead, ``leaderboard.highlight.store``).

A plain submission's page shows its first MAX_SOURCES kernels; a trace's, the best sample of
each workload of its evaluated summary on its hardware (the rows the page lists)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import BigIntegerField, ExpressionWrapper, F, QuerySet

from leaderboard.models import SubmissionSummary, WorkloadResult
from submissions.models import Candidate, Submission

# A submission page shows at most this many sources (a plain submission's first ones).
MAX_SOURCES = 100

_PAIR = 1 << 32  # a (workload, index) pair as one number: workload * _PAIR + index (an index < 2**32)


def best_candidates(submission: Submission, rows: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """candidate pk -> workload pk of every row's best sample (rows: ``workload_id``,
    ``best_index``). Two IN lists (workloads, indexes) that the (submission, workload, index)
    unique index answers, and the pairs themselves as one number per pair, so that only the best
    samples come back (not every workload x index combination): SQLite plans a long OR of
    (workload, index) pairs as a scan of the submission's candidates."""
    wanted = {(r["workload_id"], r["best_index"]) for r in rows if r["best_index"] is not None}
    if not wanted:
        return {}
    found = (
        Candidate.objects.filter(
            submission=submission, workload_id__in={w for w, _ in wanted}, index__in={i for _, i in wanted}
        )
        .alias(pair=ExpressionWrapper(F("workload_id") * _PAIR + F("index"), output_field=BigIntegerField()))
        .filter(pair__in=[w * _PAIR + i for w, i in wanted])
        .order_by()  # not the model's ordering: two joins and a sort for nothing
        .values_list("id", "workload_id", "index")
    )
    return {pk: w for pk, w, i in found if (w, i) in wanted}


def shown_candidates(submission: Submission, best: Mapping[int, int]) -> QuerySet[Candidate]:
    """The candidates whose kernels the page shows, in its order: every candidate of a plain
    submission (up to MAX_SOURCES), the ``best`` samples (``best_candidates``) of a trace."""
    qs = Candidate.objects.filter(submission=submission)
    if submission.kind == Submission.TRACE:
        qs = qs.filter(pk__in=list(best))
    return qs.order_by("workload__level", "workload__number", "index")[:MAX_SOURCES]


def shown_sources(submission: Submission) -> list[tuple[str, str]]:
    """``(code_sha256, code)`` of what ``submission``'s page shows, read the page's way (a trace's
    best samples from its evaluated summary on its hardware)."""
    best: dict[int, int] = {}
    if submission.kind == Submission.TRACE:
        evaluated = SubmissionSummary.shown(submission).filter(source=SubmissionSummary.EVALUATED)
        rows = WorkloadResult.objects.filter(summary__in=evaluated).values("workload_id", "best_index")
        best = best_candidates(submission, rows)
    return list(shown_candidates(submission, best).values_list("code_sha256", "code"))
