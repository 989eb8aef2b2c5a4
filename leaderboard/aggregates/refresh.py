"""Refresh the leaderboard aggregates (``leaderboard.models``): the SubmissionSummary and
WorkloadResult rows, from the folded samples.

Two entry points:

* ``refresh_for_evaluation(evaluation)``: called by the evaluator worker when an Evaluation
  reaches a final state. It folds that ONE evaluation into its (submission, workload, hardware)
  ``WorkloadResult`` with ``metrics.update`` and adds the change of that workload's contribution
  curves to the ``SubmissionSummary``, under row locks (``select_for_update``: row locks on
  PostgreSQL; on SQLite the IMMEDIATE transaction takes the database write lock). It reads and
  writes two rows: cost independent of the number of samples already folded (except in the rare
  repeated-refresh path, see below).
* ``rebuild_submission(submission)``: full recompute from the evaluations (the management
  command ``rebuild_aggregates``), through the same folding code (``curves.fold``).

The samples come from ``samples``, the folding and the curves from ``curves``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum

from catalog.models import Workload
from evaluator.models import Evaluation, current_harness_version, current_versions, is_current
from jaxbench import metrics
from jaxbench.metrics import INDEPENDENT, SEQUENTIAL, fast_lows
from jaxbench.metrics.curves import (
    DuplicateSample,
    WorkloadState,
    add_curves,
    build,
    empty_curves,
    fold,
    pack_curves,
    set_values,
    unpack_curves,
    with_upstream,
)
from jaxbench.workloads.sets import SET_NAMES, sets_of
from jaxbench.workloads.sets import sizes as sizes_of_sets
from leaderboard.aggregates.samples import FoldSample, evaluated_samples, reported_samples, sample_from_evaluation
from leaderboard.models import SubmissionSummary, WorkloadResult
from submissions.models import Candidate, Submission

# --------------------------------------------------------------------------------------------
# Workload sets
# --------------------------------------------------------------------------------------------

# The sets themselves are defined once, in jaxbench.workloads.sets.


def set_sizes() -> dict[str, int]:
    """|W| of every set, from the workload table."""
    return sizes_of_sets(Workload.objects.values_list("source", "expert", "level"))


def workload_versions() -> dict[int, int]:
    """workload pk -> its current version (catalog.Workload, mirrored from the registry)."""
    return dict(Workload.objects.values_list("pk", "version"))


def workload_set_map(workload_ids: Iterable[int] | None = None) -> dict[int, tuple[str, tuple[str, ...]]]:
    qs = Workload.objects.all()
    if workload_ids is not None:
        qs = qs.filter(pk__in=list(workload_ids))
    return {
        pk: (wid, sets_of(source, expert, level))
        for pk, wid, source, expert, level in qs.values_list("pk", "wid", "source", "expert", "level")
    }


# --------------------------------------------------------------------------------------------
# Summary fields
# --------------------------------------------------------------------------------------------


def _apply_set_scalars(summary: SubmissionSummary, set_curves: Mapping[str, Mapping], sizes: Mapping[str, int]):
    """Store the curves and full-budget values of the sets in ``set_curves`` (others unchanged);
    the summary's ``attempted_<set>`` are set already."""
    sets = dict(summary.sets or {})
    for name, curves in set_curves.items():
        v = with_upstream(set_values(curves, sizes.get(name, 0)), getattr(summary, f"attempted_{name}"))
        sets[name] = v
        setattr(summary, f"solved_{name}", v["solved"])
        setattr(summary, f"geomean_{name}", v["geomean"])
        setattr(summary, f"fast_{name}", v["fast"])
        setattr(summary, f"curves_{name}", pack_curves(curves))
        summary.curve_length = max(summary.curve_length or 0, len(curves["log"]))
    summary.sets = sets


def _sizes_of(summary: SubmissionSummary) -> dict[str, int]:
    """The set sizes the summary was computed with (a rebuild refreshes them)."""
    sets = summary.sets or {}
    if all(name in sets and "size" in sets[name] for name in SET_NAMES):
        return {name: sets[name]["size"] for name in SET_NAMES}
    return set_sizes()


def _counts_fields(summary: SubmissionSummary):
    total = sum(summary.counts.values())
    summary.n_samples = total
    summary.n_correct = sum(summary.counts.get(o, 0) for o in metrics.CORRECT_OUTCOMES)
    summary.per_sample_correctness = (summary.n_correct / total) if total else None
    summary.complete = (
        summary.source == SubmissionSummary.EVALUATED
        and summary.candidates_total > 0
        and total >= summary.candidates_total
    )


def _candidate_totals(submission_id: int) -> dict[str, Any]:
    """Candidate count, and total tokens / cost when every candidate reports them."""
    a = Candidate.objects.filter(submission_id=submission_id).aggregate(
        n=Count("id"),
        tin=Sum("tokens_in"),
        tout=Sum("tokens_out"),
        n_tok=Count("id", filter=Q(tokens_in__isnull=False) | Q(tokens_out__isnull=False)),
        cost=Sum("cost_usd"),
        n_cost=Count("cost_usd"),
    )
    n = a["n"] or 0
    tokens = (a["tin"] or 0) + (a["tout"] or 0) if n and a["n_tok"] == n else None
    cost = a["cost"] if n and a["n_cost"] == n else None
    return {"candidates_total": n, "tokens_total": tokens, "cost_total": cost}


def summary_from_states(
    summary: SubmissionSummary,
    states: Mapping[int, WorkloadState],
    acc: Mapping[str, Any],
    workload_sets,
    sizes,
    versions: Mapping[int, int] | None = None,
) -> list[WorkloadResult]:
    """Fill ``summary`` (not saved) from the folded states; return its unsaved WorkloadResults.
    ``workload_sets``: workload pk -> (wid, sets it belongs to) (``workload_set_map``);
    ``versions``: workload pk -> the version folded (``workload_versions``; default 1)."""
    set_curves = {name: empty_curves() for name in SET_NAMES}
    rows, best = [], {}
    for wl_id, st in sorted(states.items(), key=lambda kv: kv[0]):
        fields = st.to_row_fields(summary.mode)
        curves = unpack_curves(fields["curves"])
        wid, names = workload_sets[wl_id]
        for name in names:
            set_curves[name] = add_curves(set_curves[name], curves)
        best[wid] = st.agg.best_speedup
        rows.append(
            WorkloadResult(
                summary=summary,
                submission_id=summary.submission_id,
                workload_id=wl_id,
                hardware_id=summary.hardware_id,
                source=summary.source,
                workload_version=(versions or {}).get(wl_id, 1),
                **fields,
            )
        )
    summary.counts = dict(acc["counts"])
    summary.jax_versions = list(acc["jax_versions"])
    summary.harness_versions = list(acc["harness_versions"])
    summary.last_evaluated_at = acc["last_evaluated_at"]
    summary.precheck_stopped = sum(st.precheck_stopped for st in states.values())
    summary.best = best
    summary.fast_lows = fast_lows.pack({wl_id: st.agg for wl_id, st in states.items()}, summary.mode)
    for name in SET_NAMES:
        setattr(summary, f"attempted_{name}", sum(1 for wl_id in states if name in workload_sets[wl_id][1]))
    _counts_fields(summary)
    summary.curve_length, summary.sets = 0, {}
    _apply_set_scalars(summary, set_curves, sizes)
    return rows


# --------------------------------------------------------------------------------------------
# refresh_for_evaluation: fold ONE evaluation
# --------------------------------------------------------------------------------------------


def _lock_summary(submission_id: int, hardware_id: int, source: str, mode: str) -> tuple[SubmissionSummary, bool]:
    """The summary row, locked (select_for_update); created (with the candidates' totals) if
    missing. Must run inside transaction.atomic()."""
    qs = SubmissionSummary.objects.select_for_update().order_by()
    found = list(qs.filter(submission_id=submission_id, hardware_id=hardware_id, source=source)[:1])
    if found:
        return found[0], False
    summary = SubmissionSummary(
        submission_id=submission_id,
        hardware_id=hardware_id,
        source=source,
        mode=mode,
        counts=dict.fromkeys(metrics.OUTCOMES, 0),
        **_candidate_totals(submission_id),
    )
    _apply_set_scalars(summary, {name: empty_curves() for name in SET_NAMES}, set_sizes())
    try:
        with transaction.atomic():
            summary.save(force_insert=True)
        return summary, True
    except IntegrityError:  # created concurrently: lock the winner's row
        return qs.get(submission_id=submission_id, hardware_id=hardware_id, source=source), False


def _note_earlier(submission_id: int, hardware_id: int) -> None:
    """An evaluation of an earlier version finished (or was reviewed) beside the summary: the
    summary's count of such rows, and their earlier harnesses, counted again (exact however
    often a row is announced; a rare path: one grouped query)."""
    with transaction.atomic(savepoint=False):
        summary = (
            SubmissionSummary.objects.select_for_update()
            .filter(submission_id=submission_id, hardware_id=hardware_id, source=SubmissionSummary.EVALUATED)
            .only("pk", "earlier_versions", "earlier_harness_versions")
            .first()
        )
        if summary is None:  # a rebuild counts them when the summary is made
            return
        earlier = earlier_rows(submission_id).get(hardware_id, {})
        summary.earlier_versions = sum(earlier.values())
        summary.earlier_harness_versions = sorted(h for h in earlier if h != current_harness_version())
        summary.save(update_fields=["earlier_versions", "earlier_harness_versions", "updated_at"])


def refresh_for_evaluation(evaluation) -> WorkloadResult | None:
    """Fold ONE finished evaluation into the leaderboard aggregates; return its WorkloadResult
    (None when the evaluation does not carry the outcome that counts for its candidate).

    Idempotent: refreshing an evaluation whose sample is already folded recomputes that one
    workload from its evaluations (e.g. a re-run), so a repeated call changes nothing."""
    ev = evaluation
    cand = (
        Candidate.objects.filter(pk=ev.candidate_id)
        .values(
            "index",
            "workload_id",
            "submission_id",
            "submission__sampling",
            "submission__kind",
            "workload__wid",
            "workload__source",
            "workload__expert",
            "workload__level",
            "workload__version",
        )
        .first()
    )
    if cand is None:
        return None
    if not is_current(ev.workload_version, cand["workload__version"], ev.harness_version):
        # an earlier (or not yet current) workload or harness version: kept, never folded; the
        # summary only notes that the submission page has such rows to list
        _note_earlier(cand["submission_id"], ev.hardware_id)
        return None
    sample = sample_from_evaluation(
        cand["workload_id"],
        cand["index"],
        ev.stage,
        ev.state,
        ev.outcome,
        ev.speedup,
        ev.record,
        ev.finished_at,
        ev.review,
    )
    if sample is None:
        return None
    mode = INDEPENDENT if cand["submission__sampling"] == INDEPENDENT else SEQUENTIAL
    names = sets_of(cand["workload__source"], cand["workload__expert"], cand["workload__level"])
    # savepoint=False: inside the verdict's transaction (evaluator.runner.finish) a savepoint
    # would cost two more round trips and buy nothing; any error here aborts the verdict too.
    with transaction.atomic(savepoint=False):
        summary, created = _lock_summary(cand["submission_id"], ev.hardware_id, SubmissionSummary.EVALUATED, mode)
        before = {f.attname: getattr(summary, f.attname) for f in SubmissionSummary._meta.concrete_fields}
        found = list(
            WorkloadResult.objects.select_for_update()
            .order_by()
            .filter(summary=summary, workload_id=cand["workload_id"])[:1]
        )
        row = found[0] if found else None
        old = WorkloadState.from_row(row)
        new = WorkloadState.from_row(row)
        try:
            fold(new, sample)
            repeated = False
        except DuplicateSample:
            repeated = True
            samples = [s for hw, s in evaluated_samples(cand["submission_id"], ev.hardware_id, cand["workload_id"])]
            new = build(samples)[0].get(cand["workload_id"], WorkloadState())
        fields = new.to_row_fields(mode)
        new_curves = unpack_curves(fields["curves"])
        old_curves = unpack_curves(row.curves) if row is not None else empty_curves()
        update = row is not None
        if row is None:
            for name in names:  # the workload's first folded kernel: attempted now
                setattr(summary, f"attempted_{name}", getattr(summary, f"attempted_{name}") + 1)
            row = WorkloadResult(
                summary=summary,
                submission_id=cand["submission_id"],
                workload_id=cand["workload_id"],
                hardware_id=ev.hardware_id,
                source=SubmissionSummary.EVALUATED,
                workload_version=ev.workload_version,
            )
        for k, v in fields.items():
            setattr(row, k, v)
        # an UPDATE of the derived columns only (the keys never change)
        row.save(update_fields=[*fields, "updated_at"] if update else None)

        # The summary: add the change of this workload's contribution.
        set_curves = {
            name: add_curves(unpack_curves(getattr(summary, f"curves_{name}")), new_curves, old_curves)
            for name in names
        }
        counts = dict(summary.counts) or dict.fromkeys(metrics.OUTCOMES, 0)
        for o, c_new, c_old in zip(metrics.OUTCOMES, new.agg.counts, old.agg.counts):
            counts[o] = counts.get(o, 0) + c_new - c_old
        summary.counts = counts
        summary.precheck_stopped += new.precheck_stopped - old.precheck_stopped
        summary.best = dict(summary.best, **{cand["workload__wid"]: new.agg.best_speedup})
        if created or summary.fast_lows:  # one packed before them stays empty (the aggregates answer)
            summary.fast_lows = fast_lows.with_workload(summary.fast_lows, cand["workload_id"], new.agg, summary.mode)
        if not repeated:
            if sample.jax_version and sample.jax_version not in summary.jax_versions:
                summary.jax_versions = sorted([*summary.jax_versions, sample.jax_version])
            if sample.harness_version and sample.harness_version not in summary.harness_versions:
                summary.harness_versions = sorted([*summary.harness_versions, sample.harness_version])
        if sample.finished_at is not None and (
            summary.last_evaluated_at is None or sample.finished_at > summary.last_evaluated_at
        ):
            summary.last_evaluated_at = sample.finished_at
        if not summary.complete and sum(counts.values()) >= summary.candidates_total:
            # about to call it complete (verified): confirm the candidate count first
            summary.candidates_total = _candidate_totals(cand["submission_id"])["candidates_total"]
        _counts_fields(summary)
        _apply_set_scalars(summary, set_curves, _sizes_of(summary))
        # an UPDATE of the columns this fold changed (the curves of the sets the workload is not
        # in stay as they are: most of the row's bytes)
        changed = [a for a, v in before.items() if getattr(summary, a) != v]
        summary.save(update_fields=None if created else [*changed, "updated_at"])
    if created and cand["submission__kind"] == "trace":
        transaction.on_commit(lambda: ensure_reported(cand["submission_id"]))
    return row


# --------------------------------------------------------------------------------------------
# Full rebuilds
# --------------------------------------------------------------------------------------------


def _save_summary(
    submission,
    hardware_id: int,
    source: str,
    samples: list[FoldSample],
    sizes,
    wmap,
    totals: Mapping[str, Any],
    versions: Mapping[int, int] | None = None,
    earlier: Mapping[str, int] | None = None,
) -> SubmissionSummary:
    mode = INDEPENDENT if submission.sampling == INDEPENDENT else SEQUENTIAL
    summary = SubmissionSummary.objects.select_for_update().filter(
        submission=submission, hardware_id=hardware_id, source=source
    ).first() or SubmissionSummary(submission=submission, hardware_id=hardware_id, source=source)
    summary.mode = mode
    for k, v in totals.items():
        setattr(summary, k, v)
    states, acc = build(samples)
    earlier = earlier or {}
    summary.earlier_versions = sum(earlier.values())
    summary.earlier_harness_versions = sorted(h for h in earlier if h != current_harness_version())
    rows = summary_from_states(
        summary, states, acc, wmap, sizes, versions if versions is not None else workload_versions()
    )
    summary.save()
    WorkloadResult.objects.filter(summary=summary).delete()
    WorkloadResult.objects.bulk_create(rows, batch_size=500)
    return summary


def rebuild_reported(submission) -> SubmissionSummary | None:
    """(Re)build the self-reported summary of a submission from its candidates' reported
    outcomes; removes it when nothing is reported."""
    samples = reported_samples(submission.pk)
    with transaction.atomic():
        if not samples:
            SubmissionSummary.objects.filter(submission=submission, source=SubmissionSummary.REPORTED).delete()
            return None
        wmap = workload_set_map({s.workload_id for s in samples})
        return _save_summary(
            submission,
            submission.hardware_id,
            SubmissionSummary.REPORTED,
            samples,
            set_sizes(),
            wmap,
            _candidate_totals(submission.pk),
        )


def ensure_reported(submission_id: int) -> SubmissionSummary | None:
    """Build the self-reported summary unless it is already built for every candidate."""
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        return None
    existing = SubmissionSummary.objects.filter(submission=submission, source=SubmissionSummary.REPORTED).first()
    n = Candidate.objects.filter(submission=submission).count()
    if existing is not None and existing.candidates_total == n:
        return existing
    if existing is None and not Candidate.objects.filter(submission=submission).exclude(reported_outcome="").exists():
        return None
    return rebuild_reported(submission)


def earlier_rows(submission_id: int) -> dict[int, dict[str, int]]:
    """hardware pk -> {harness version: final evaluations of ``submission_id`` under an earlier
    workload version or an earlier harness} (one query)."""
    out: dict[int, dict[str, int]] = {}
    for hw, harness, n in (
        Evaluation.objects.filter(
            candidate__submission_id=submission_id, state__in=(Evaluation.DONE, Evaluation.SKIPPED)
        )
        .exclude(current_versions())
        .values_list("hardware_id", "harness_version")
        .annotate(n=Count("id"))
        .order_by()
    ):
        out.setdefault(hw, {})[harness] = n
    return out


def earlier_version_counts(submission_id: int) -> dict[int, int]:
    """hardware pk -> final evaluations of ``submission_id`` under an earlier workload version or
    an earlier harness."""
    return {hw: sum(by.values()) for hw, by in earlier_rows(submission_id).items()}


def rebuild_submission(submission) -> list[SubmissionSummary]:
    """Recompute every summary of ``submission`` from its evaluations (and its reported
    outcomes) through the same folding code as ``refresh_for_evaluation``."""
    by_hw: dict[int, list[FoldSample]] = {submission.hardware_id: []}
    for hw, s in evaluated_samples(submission.pk):
        by_hw.setdefault(hw, []).append(s)
    sizes = set_sizes()
    wmap = workload_set_map()
    versions = workload_versions()
    earlier = earlier_rows(submission.pk)
    totals = _candidate_totals(submission.pk)
    out = []
    with transaction.atomic():
        SubmissionSummary.objects.filter(submission=submission, source=SubmissionSummary.EVALUATED).exclude(
            hardware_id__in=list(by_hw)
        ).delete()
        for hw, samples in by_hw.items():
            out.append(
                _save_summary(
                    submission,
                    hw,
                    SubmissionSummary.EVALUATED,
                    samples,
                    sizes,
                    wmap,
                    totals,
                    versions,
                    earlier.get(hw),
                )
            )
    reported = rebuild_reported(submission)
    if reported is not None:
        out.append(reported)
    return out


def rebuild_all(submissions=None, progress=None) -> int:
    qs = submissions if submissions is not None else Submission.objects.all()
    n = 0
    for sub in qs.order_by("pk").iterator():
        rebuild_submission(sub)
        n += 1
        if progress:
            progress(sub, n)
    return n
