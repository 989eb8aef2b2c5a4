"""The counts ``leaderboard.submission_state`` reads, for many submissions at once: one grouped
query over their evaluations and one for each one's first failure (a page of 50 submissions
costs three queries, whatever their sizes)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Case, Count, OuterRef, Q, Subquery, Value, When

from evaluator.models import Evaluation, current_versions
from jaxbench.record import CORRECT_OUTCOMES, format_speedup
from jaxbench.verdict import review as review_rules
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
        .order_by("candidate__workload__number", "candidate__index", "id")
        .values("id")[:1]
    )
    ev_ids = [
        e
        for e in Submission.objects.filter(pk__in=ids)
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


def states_for(submissions: Iterable[Submission]) -> dict[int, State]:
    """{submission pk: its State}, counted as ``evaluator.progress.submission_progress`` counts:
    rows of the current workload and harness versions; a candidate with only earlier rows counts
    as done (its results are of an earlier version, listed apart)."""
    subs = list(submissions)
    ids = [s.pk for s in subs]
    if not ids:
        return {}
    totals = dict(
        Candidate.objects.filter(submission_id__in=ids)
        .order_by()
        .values("submission_id")
        .annotate(n=Count("id"))
        .values_list("submission_id", "n")
    )
    rows = (
        Evaluation.objects.filter(candidate__submission_id__in=ids)
        .annotate(current=Case(When(current_versions(), then=Value(True)), default=Value(False)))
        .values("candidate__submission_id", "stage", "state", "outcome", "review", "current")
        .annotate(n=Count("id"))
        .order_by()
    )
    acc: dict[int, dict] = {pk: {"done": 0, "running": 0, "scheduled": 0, "earlier": 0, "outcomes": {}} for pk in ids}
    first_stage = {s.pk: Evaluation.PRECHECK if s.hardware.prechecked else Evaluation.MAIN for s in subs}
    for r in rows:
        a = acc[r["candidate__submission_id"]]
        n = r["n"]
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
    firsts = _first_failures([pk for pk, a in acc.items() if any(o not in CORRECT_OUTCOMES for o in a["outcomes"])])
    out = {}
    for pk, a in acc.items():
        total = totals.get(pk, 0)
        done = a["done"]
        if a["earlier"]:
            done += max(0, total - a["scheduled"])
        out[pk] = submission_state(total, done, a["outcomes"], running=a["running"], first_failure=firsts.get(pk))
    return out


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
        .order_by("candidate__workload__number", "candidate__index", "id")
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
