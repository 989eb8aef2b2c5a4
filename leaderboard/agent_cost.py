"""Cost and tokens per solved workload of one trajectory upload (ATIF, ADK): the candidates'
self-reported cumulative usage beside this portal's measured verdicts, through the pure
``jaxbench.metrics.agent_cost``. A held row (review) or a candidate not measured yet counts as
not solved: only measured verdicts decide."""

from __future__ import annotations

from evaluator.models import Evaluation, current_versions
from jaxbench.metrics.agent_cost import AgentCost, KernelSpend, agent_cost
from jaxbench.verdict import review as review_rules
from leaderboard.aggregates.samples import counts_for_candidate
from submissions.models import Candidate


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def measured_outcomes(submission) -> dict[int, str]:
    """candidate id -> the outcome this portal measured (current versions, submission's hardware,
    the main stage's over a pre-check's), held rows left out."""
    out: dict[int, tuple[bool, str]] = {}
    rows = (
        Evaluation.objects.filter(current_versions(), candidate__submission=submission, hardware=submission.hardware)
        .order_by()
        .values_list("candidate_id", "stage", "state", "outcome", "review")
    )
    for cid, stage, state, outcome, review in rows:
        if not outcome or not counts_for_candidate(stage, state) or review_rules.is_held(review):
            continue
        main = stage != Evaluation.PRECHECK
        if cid not in out or (main and not out[cid][0]):
            out[cid] = (main, outcome)
    return {cid: outcome for cid, (_, outcome) in out.items()}


def submission_agent_cost(submission) -> AgentCost | None:
    """The figures of a trajectory upload; None when its candidates carry no cumulative usage
    (kernel files, jaxbench-trace/1 samples, or a trajectory that reported none)."""
    cands = list(
        Candidate.objects.filter(submission=submission)
        .exclude(cum_tokens_in=None, cum_tokens_out=None, cum_cost_usd=None)
        .order_by()
        .values_list("id", "workload__wid", "index", "step_at", "cum_tokens_in", "cum_tokens_out", "cum_cost_usd")
    )
    if not cands:
        return None
    outcomes = measured_outcomes(submission)
    # the trajectory's order: the intake inserts its kernels in that order, so by id
    cands.sort(key=lambda c: c[0])
    return agent_cost(
        KernelSpend(
            workload=wid,
            index=index,
            order=order,
            cum_tokens=_sum(tin, tout),
            cum_cost_usd=cost,
            outcome=outcomes.get(cid),
        )
        for order, (cid, wid, index, _at, tin, tout, cost) in enumerate(cands)
    )
