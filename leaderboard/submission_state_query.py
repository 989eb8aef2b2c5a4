"""The counts ``leaderboard.submission_state`` reads, for many submissions at once: a settled
submission's from its summary, the others' from one grouped query over their evaluations, and
one query for each one's first failure (a page of 50 submissions costs a handful of queries,
whatever their sizes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Case, Count, OuterRef, Q, Subquery, Value, When

from evaluator.models import Evaluation, current_harness_version, current_versions
from jaxbench.record import CORRECT_OUTCOMES, Outcome, format_speedup
from jaxbench.verdict import review as review_rules
from leaderboard.models import SubmissionSummary
from leaderboard.submission_state import (
    INFRASTRUCTURE,
    FirstFailure,
    State,
    held_sentence,
    outcome_label,
    submission_state,
)
from submissions.models import Candidate, Submission

# a candidate's final verdict: its main stage's, or the pre-check's that stopped it
_FINAL = Q(stage=Evaluation.MAIN, state__in=Evaluation.FINAL_STATES) | Q(
    stage=Evaluation.PRECHECK, state=Evaluation.SKIPPED
)
_FAILED = _FINAL & ~Q(outcome__in=list(CORRECT_OUTCOMES))


def _first_failures(ids: list[int]) -> dict[int, FirstFailure]:
    first = (
        Evaluation.objects.filter(_FAILED, candidate__submission=OuterRef("pk"))
        .filter(current_versions())
        .order_by("candidate__workload__level", "candidate__workload__number", "candidate__index", "id")
        .values("id")[:1]
    )
    ev_ids = [
        e
        # the base manager: a test run's page asks too (Submission.objects leaves test runs out)
        for e in Submission._base_manager.filter(pk__in=ids)
        .annotate(first=Subquery(first))
        .order_by()
        .values_list("first", flat=True)
        if e is not None
    ]
    out = {}
    for ev in Evaluation.objects.filter(pk__in=ev_ids).values(
        "candidate__submission_id", "candidate__workload__wid", "candidate__index", "outcome", "message"
    ):
        out[ev["candidate__submission_id"]] = FirstFailure(
            ev["candidate__workload__wid"], ev["candidate__index"], ev["outcome"] or INFRASTRUCTURE, ev["message"] or ""
        )
    return out


# what the lists read of a summary (its curves and per-workload bests are most of its bytes)
_SUMMARY_FIELDS = (
    "submission_id",
    "hardware_id",
    "source",
    "candidates_total",
    "n_samples",
    "counts",
    "earlier_versions",
    "harness_versions",
)


def _summaries(ids: list[int]) -> list[dict]:
    return list(SubmissionSummary.objects.filter(submission_id__in=ids).order_by().values(*_SUMMARY_FIELDS))


def candidate_counts(ids: list[int], summaries: list[dict] | None = None) -> dict[int, int]:
    """{submission pk: how many candidates it has}. A submission's candidates are stored once,
    with it (``submissions.intake.store``), and each of its summaries counts them when it is made
    (``candidates_total``): read there, and counted (the (submission, workload, index) index)
    only for a submission without a summary yet. Two queries at most, whatever the sizes: a
    count per row of a page was 0.12 s for 100 submissions of 7,200 candidates on SQLite."""
    summaries = _summaries(ids) if summaries is None else summaries
    out = {s["submission_id"]: s["candidates_total"] for s in summaries}
    missing = [pk for pk in ids if pk not in out]
    if missing:
        out.update(
            Candidate.objects.filter(submission_id__in=missing)
            .order_by()
            .values_list("submission_id")
            .annotate(n=Count("id"))
            .values_list("submission_id", "n")
        )
    return out


def held_counts(ids: list[int]) -> dict[int, int]:
    """{submission pk: its verdicts held for review} (one query over the held rows' index)."""
    return dict(
        Evaluation.objects.filter(candidate__submission_id__in=ids, review=Evaluation.HELD)
        .order_by()
        .values_list("candidate__submission_id")
        .annotate(n=Count("id"))
        .values_list("candidate__submission_id", "n")
    )


@dataclass(frozen=True)
class Counts:
    """What a list of submissions shows of each: its state, and its main-stage verdicts faster
    than XLA and within noise of it (held ones in neither)."""

    state: State
    faster: int
    ties: int


def counts_for(submissions: Iterable[Submission]) -> dict[int, Counts]:
    """{submission pk: its Counts}, counted as ``evaluator.progress.submission_progress`` counts:
    rows of the current workload and harness versions; a candidate with only earlier rows counts
    as done (its results are of an earlier version, listed apart).

    A settled submission (``_settled``: every candidate has its verdict, each folded into its
    summary or held, and none of an earlier version) is read from its summary: counting its
    evaluations cost a tenth of a second per 7,200-sample submission on SQLite. The others (in
    flight, or with earlier versions or failures that fold into nothing) are counted from their
    rows in one grouped query."""
    subs = list(submissions)
    ids = [s.pk for s in subs]
    if not ids:
        return {}
    summaries = _summaries(ids)
    totals = candidate_counts(ids, summaries)
    held = held_counts(ids)
    settled = _settled(subs, summaries, totals, held)
    acc = _row_counts([s for s in subs if s.pk not in settled])
    acc.update(settled)
    firsts = _first_failures([pk for pk, a in acc.items() if any(o not in CORRECT_OUTCOMES for o in a["outcomes"])])
    out = {}
    for pk, a in acc.items():
        total = totals.get(pk, 0)
        done = a["done"]
        if a["earlier"]:
            done += max(0, total - a["scheduled"])
        state = submission_state(total, done, a["outcomes"], running=a["running"], first_failure=firsts.get(pk))
        out[pk] = Counts(state, a["faster"], a["ties"])
    return out


def _settled(
    subs: list[Submission], summaries: list[dict], totals: dict[int, int], held: dict[int, int]
) -> dict[int, dict]:
    """The counts of the submissions their evaluated summary (on their hardware) answers for: no
    result of an earlier workload version or harness, and every candidate folded into it
    (``n_samples``) or held. Its counts are those of the rows then: a folded candidate has one
    final row of the current versions, a held one too (a held row is never folded), and only
    correct outcomes can fold under another name (``samples.normalize``), which the state does
    not tell apart."""
    hardware = {s.pk: s.hardware_id for s in subs}
    harness = {current_harness_version()}
    out = {}
    for summ in summaries:
        pk, n_held = summ["submission_id"], held.get(summ["submission_id"], 0)
        if summ["source"] != SubmissionSummary.EVALUATED or summ["hardware_id"] != hardware[pk]:
            continue
        if summ["earlier_versions"] or summ["n_samples"] + n_held != totals.get(pk):
            continue
        if not set(summ["harness_versions"] or ()) <= harness:  # folded before a harness bump
            continue
        outcomes = {o: n for o, n in summ["counts"].items() if n}
        if n_held:
            outcomes[review_rules.HELD_OUTCOME] = n_held
        counts = summ["counts"]
        out[pk] = _acc(done=summ["n_samples"] + n_held, outcomes=outcomes)
        out[pk].update(faster=counts.get(Outcome.CORRECT_FASTER, 0), ties=counts.get(Outcome.CORRECT_TIE, 0))
    return out


def _acc(**values) -> dict:
    return {"done": 0, "running": 0, "scheduled": 0, "earlier": 0, "outcomes": {}, "faster": 0, "ties": 0, **values}


def _row_counts(subs: list[Submission]) -> dict[int, dict]:
    """The counts of ``subs`` from their evaluation rows (one grouped query)."""
    ids = [s.pk for s in subs]
    if not ids:
        return {}
    rows = (
        Evaluation.objects.filter(candidate__submission_id__in=ids)
        .annotate(current=Case(When(current_versions(), then=Value(True)), default=Value(False)))
        .values("candidate__submission_id", "stage", "state", "outcome", "review", "current")
        .annotate(n=Count("id"))
        .order_by()
    )
    acc: dict[int, dict] = {pk: _acc() for pk in ids}
    first_stage = {s.pk: Evaluation.PRECHECK if s.hardware.prechecked else Evaluation.MAIN for s in subs}
    for r in rows:
        a = acc[r["candidate__submission_id"]]
        n = r["n"]
        # faster and tie verdicts as the list always counted them: main rows of any version
        if r["stage"] == Evaluation.MAIN and not review_rules.is_held(r["review"]):
            a["faster"] += n if r["outcome"] == Outcome.CORRECT_FASTER else 0
            a["ties"] += n if r["outcome"] == Outcome.CORRECT_TIE else 0
        if not r["current"]:
            a["earlier"] += n
            continue
        if r["stage"] == first_stage[r["candidate__submission_id"]]:
            a["scheduled"] += n
        if r["state"] == Evaluation.RUNNING:
            a["running"] += n
        final = (r["stage"] == Evaluation.MAIN and r["state"] in Evaluation.FINAL_STATES) or (
            r["stage"] == Evaluation.PRECHECK and r["state"] == Evaluation.SKIPPED
        )
        if final:
            a["done"] += n
            shown = review_rules.shown_outcome(r["outcome"] or INFRASTRUCTURE, r["review"])
            a["outcomes"][shown] = a["outcomes"].get(shown, 0) + n
    return acc


def states_for(submissions: Iterable[Submission]) -> dict[int, State]:
    """{submission pk: its State} (``counts_for``)."""
    return {pk: c.state for pk, c in counts_for(submissions).items()}


def state_of(submission: Submission) -> State:
    return states_for([submission])[submission.pk]


def held_results(ids: list[int], *, with_speed: bool) -> dict[int, list[dict]]:
    """{submission pk: its held results in workload and sample order}, each with ``sentence``
    (``leaderboard.submission_state.held_sentence``): what was measured (its speed only when
    ``with_speed``: for the team's own pages, never a public one, TRUST.md 6), why it is held,
    who reviews it and what happens next. One query (the partial index on held rows)."""
    out: dict[int, list[dict]] = {}
    if not ids:
        return out
    for ev in (
        Evaluation.objects.filter(candidate__submission_id__in=ids, review=Evaluation.HELD)
        .order_by("candidate__workload__level", "candidate__workload__number", "candidate__index", "id")
        .values(
            "pk",
            "candidate__submission_id",
            "candidate__workload__wid",
            "candidate__index",
            "outcome",
            "speedup",
            "speedup_lo",
            "speedup_hi",
            "record__notes",
            "record__baseline_source",
        )
    ):
        measured = "correct"
        if with_speed:
            measured = outcome_label(ev["outcome"])
            if ev["speedup"] is not None:
                measured += " " + format_speedup(ev["speedup"], ev["speedup_lo"], ev["speedup_hi"])
        reasons = review_rules.reasons({"notes": ev["record__notes"], "baseline_source": ev["record__baseline_source"]})
        out.setdefault(ev["candidate__submission_id"], []).append(
            {
                "pk": ev["pk"],
                "wid": ev["candidate__workload__wid"],
                "index": ev["candidate__index"],
                "reasons": reasons,
                "sentence": held_sentence(measured, reasons),
            }
        )
    return out
