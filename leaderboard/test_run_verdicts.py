"""Each kernel's verdict in a test run, for its page and the API (docs/DESIGN.md, "Test runs").

One row per kernel: its main stage's evaluation, or the pre-check's while it has none (the one
that stopped it, or the one still to pass), of the current workload and harness versions. A held
result (TRUST.md 6) is ``held_for_review`` with its measured speed beside it: a test run is its
owner's alone, as a private submission's held speed is its team's."""

from __future__ import annotations

from evaluator.models import Evaluation, current_versions
from jaxbench.record import OUTCOME_LABELS, format_speedup, message_head, message_where
from jaxbench.verdict import review as review_rules
from leaderboard.submission_state import INFRASTRUCTURE

_STAGES = dict(Evaluation.STAGES)
_STATES = dict(Evaluation.STATES)


def verdicts(run) -> list[dict]:
    """The kernels of test run ``run`` in workload order, each ``{"evaluation", "workload",
    "title", "filename", "stage", "stage_label", "state", "status", "finished", "outcome",
    "outcome_label", "held_for_review", "speedup", "speedup_lo", "speedup_hi", "speedup_text",
    "message", "message_head", "where", "reused"}``."""
    final: dict[int, Evaluation] = {}
    for ev in (
        Evaluation.objects.filter(current_versions(), candidate__submission=run)
        .select_related("candidate__workload")
        .defer("record", "candidate__code")
        .order_by("candidate__workload__level", "candidate__workload__number", "id")
    ):
        if ev.candidate_id not in final or ev.stage == Evaluation.MAIN:
            final[ev.candidate_id] = ev
    rows = []
    for ev in final.values():
        # a pre-check that passed is not a verdict: the main stage comes next
        finished = ev.state in Evaluation.FINAL_STATES and not (
            ev.stage == Evaluation.PRECHECK and ev.state == Evaluation.DONE
        )
        outcome = review_rules.shown_outcome(ev.outcome, ev.review) if ev.outcome else ""
        if finished and not outcome:
            outcome = INFRASTRUCTURE
        if ev.stage == Evaluation.PRECHECK and ev.state == Evaluation.DONE:
            status = "pre-check passed; the evaluation comes next"
        else:
            status = _STATES.get(ev.state, ev.state)
        message = ev.message if finished else ""
        rows.append(
            {
                "evaluation": ev.pk,
                "workload": ev.candidate.workload.wid,
                "title": ev.candidate.workload.title,
                "filename": ev.candidate.filename,
                "stage": ev.stage,
                "stage_label": _STAGES.get(ev.stage, ev.stage),
                "state": ev.state,
                "status": status,
                "finished": finished,
                "outcome": outcome,
                "outcome_label": OUTCOME_LABELS.get(outcome, outcome.replace("_", " ")),
                "held_for_review": review_rules.is_held(ev.review),
                "speedup": ev.speedup,
                "speedup_lo": ev.speedup_lo,
                "speedup_hi": ev.speedup_hi,
                "speedup_text": format_speedup(ev.speedup, ev.speedup_lo, ev.speedup_hi)
                if ev.speedup is not None
                else "",
                "message": message,
                "message_head": message_head(message, 3),
                "where": (message_where(message) or [""])[-1],
                "reused": ev.reused_from_id is not None,
            }
        )
    return rows
