"""Verdicts reused for identical code: agents repeat themselves, and the verdict would be the same.

A finished evaluation is a precedent for another one with the same source (``code_sha256``),
workload and workload version, hardware target, stage, size profile, harness version and JAX
version, unless it was
itself reused, was reached through infrastructure failures (a child killed from outside: that
attempt's, never a precedent) or belongs to a test run (private, and deleted when it expires). Reuse is resolved twice:

* at intake (``reuse_at_intake``, inside the upload's transaction): every new row whose code was
  already judged is stored final at once, marked ``reused``, and folded into the aggregates like
  any verdict, so it never waits in a queue for a worker to reach it;
* by the worker when it claims a row (``reusable_record``): for identical code judged meanwhile,
  e.g. a sample that repeats an earlier one of the same upload.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib import metadata

from django.db.models import F
from django.utils import timezone

from evaluator.models import Evaluation, current_harness_version
from evaluator.signals import evaluation_finished

# rows looked up per query (a 7,200-sample trace: 15 queries)
CHUNK = 500


@cache
def jax_version() -> str | None:
    """The installed JAX's version, without importing JAX (the web process never does). The
    portal and its workers run one pinned JAX (requirements.txt)."""
    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:  # pragma: no cover - JAX is a requirement
        return None


def profile_of(stage: str, hardware) -> str:
    return "small" if stage == Evaluation.PRECHECK else hardware.profile


def precedents(hardware, stage: str):
    """The evaluations that may be reused on ``hardware`` at ``stage`` (same versions)."""
    return (
        Evaluation.objects.filter(
            hardware=hardware,
            stage=stage,
            state__in=(Evaluation.DONE, Evaluation.SKIPPED),
            # the row's harness version and its record's: equal for every row measured since the
            # column exists (the worker checks it when it claims a row); an assumed one is not
            harness_version=current_harness_version(),
            record__harness_version=current_harness_version(),
            record__jax_version=jax_version(),
            record__profile=profile_of(stage, hardware),
            reused_from__isnull=True,
        )
        # a verdict reached through infrastructure failures is this attempt's, never a precedent
        .exclude(record__has_key="infrastructure_attempts")
        # nor a test run's: it is private and deleted when it expires (a copy would outlive it)
        .exclude(candidate__submission__test_run=True)
    )


def reusable_record(ev: Evaluation) -> Evaluation | None:
    """The earliest precedent for ``ev`` (the worker's check when it claims a row)."""
    return (
        precedents(ev.hardware, ev.stage)
        .filter(
            code_sha256=ev.code_sha256, candidate__workload=ev.candidate.workload, workload_version=ev.workload_version
        )
        .exclude(pk=ev.pk)
        .order_by("finished_at", "pk")
        .first()
    )


REUSED_COLUMNS = (
    "pk",
    "state",
    "outcome",
    "speedup",
    "speedup_lo",
    "speedup_hi",
    "message",
    "record",
    "finished_at",
    "review",
)


def reused_fields(previous: Evaluation, now) -> dict:
    """The columns of a row that takes ``previous``'s verdict."""
    return {
        "state": previous.state,
        "outcome": previous.outcome,
        "speedup": previous.speedup,
        "speedup_lo": previous.speedup_lo,
        "speedup_hi": previous.speedup_hi,
        "message": previous.message,
        "record": dict(previous.record, reused=True),
        # held means held (TRUST.md 6): a copy of a held verdict is held too, and the review of
        # its precedent decides it (evaluator.review.decide covers rows reused from it)
        "review": previous.review,
        "reused_from": previous,
        "finished_at": now,
        "lease_expires_at": None,
    }


def reuse_at_intake(hardware, stage: str, rows: Iterable[tuple[int, str, int]]) -> tuple[list[Evaluation], list[int]]:
    """Resolve the queued rows ``(evaluation id, code_sha256, workload id)`` just created at
    ``stage`` (inside the intake's transaction): each with a precedent is stored final with its
    verdict and announced (``evaluation_finished``: the aggregates fold it in the same
    transaction). Returns (the reused rows, the ids still to evaluate)."""
    rows = list(rows)
    ours = {pk for pk, _, _ in rows}
    found: dict[tuple[str, int], Evaluation] = {}
    shas = sorted({sha for _, sha, _ in rows})
    for i in range(0, len(shas), CHUNK):
        chunk = shas[i : i + CHUNK]
        for ev in (
            precedents(hardware, stage)
            .filter(code_sha256__in=chunk, workload_version=F("candidate__workload__version"))
            .select_related("candidate")
            .only(*REUSED_COLUMNS, "code_sha256", "candidate__workload_id")
            .order_by("finished_at", "pk")
        ):
            if ev.pk in ours:
                continue
            found.setdefault((ev.code_sha256, ev.candidate.workload_id), ev)
    if not found:
        return [], [pk for pk, _, _ in rows]
    now = timezone.now()
    reused, waiting = [], []
    for pk, sha, workload_id in rows:
        previous = found.get((sha, workload_id))
        if previous is None:
            waiting.append(pk)
            continue
        fields = reused_fields(previous, now)
        Evaluation.objects.filter(pk=pk, state=Evaluation.QUEUED).update(**fields)
        ev = Evaluation.objects.get(pk=pk)
        evaluation_finished.send(sender=Evaluation, evaluation=ev)
        reused.append(ev)
    return reused, waiting
