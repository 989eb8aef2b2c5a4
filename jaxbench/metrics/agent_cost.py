"""What an agent spent to solve a workload (pure: no Django, no database).

Inputs are the kernels of one trajectory (an ATIF or ADK upload, or any trace whose samples
carry cumulative usage) with the portal's **measured** outcome of each (None while it is not
measured, or held for review): the agent's self-reported usage never decides what is solved.

* A workload is *solved* at its first kernel the portal measured correct (``correct_slower``,
  ``correct_tie`` or ``correct_faster``) and *fast* at its first measured ``correct_faster``
  (the portal's interval lies above 1.0).
* *Tokens (cost) to first correct* of a workload: the agent's cumulative tokens (cost) at the
  step that wrote that kernel -- everything the trajectory spent until then, on every workload,
  since one trajectory's steps serve them all.
* *fast@N* here: the share of the trajectory's workloads with a fast kernel among all N of their
  kernels; *fast@N per dollar*: that share over the trajectory's cost up to its last kernel;
  *cost per solved workload*: that cost over the solved workloads.

Every figure is None where the usage was not reported (or is 0, for a ratio).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from jaxbench.record import CORRECT_OUTCOMES, Outcome

from .cost import per_dollar

_CORRECT = frozenset(str(o) for o in CORRECT_OUTCOMES)
_FASTER = str(Outcome.CORRECT_FASTER)


@dataclasses.dataclass(frozen=True)
class KernelSpend:
    """One kernel of a trajectory: its order in the trajectory (``order``: the step's rank;
    ties keep the input order), its workload and index, the agent's cumulative usage at its
    step, and the portal's measured outcome (None: not measured yet, or held)."""

    workload: str
    index: int
    order: int
    cum_tokens: int | None
    cum_cost_usd: float | None
    outcome: str | None


@dataclasses.dataclass(frozen=True)
class WorkloadSpend:
    workload: str
    kernels: int
    first_correct_index: int | None
    tokens_to_first_correct: int | None
    cost_to_first_correct: float | None
    first_fast_index: int | None
    tokens_to_first_fast: int | None
    cost_to_first_fast: float | None
    pending: int  # kernels without a measured outcome


@dataclasses.dataclass(frozen=True)
class AgentCost:
    workloads: list[WorkloadSpend]
    n: int  # the most kernels of one workload (the N of fast@N)
    solved: int
    fast: int
    pending: int
    total_tokens: int | None  # cumulative at the trajectory's last kernel
    total_cost_usd: float | None
    fast_at_n: float | None
    fast_at_n_per_dollar: float | None
    cost_per_solved: float | None
    tokens_per_solved: float | None

    @property
    def reported(self) -> bool:
        """Whether the trajectory reported any usage at all."""
        return self.total_tokens is not None or self.total_cost_usd is not None


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def agent_cost(kernels: Iterable[KernelSpend]) -> AgentCost:
    """The cost figures of one trajectory's kernels (see the module docstring)."""
    ordered = sorted(enumerate(kernels), key=lambda p: (p[1].order, p[0]))
    by_workload: dict[str, list[KernelSpend]] = {}
    for _, k in ordered:
        by_workload.setdefault(k.workload, []).append(k)
    rows: list[WorkloadSpend] = []
    for wid, ks in by_workload.items():
        ks_by_index = sorted(ks, key=lambda k: k.index)
        correct = next((k for k in ks_by_index if k.outcome in _CORRECT), None)
        faster = next((k for k in ks_by_index if k.outcome == _FASTER), None)
        rows.append(
            WorkloadSpend(
                workload=wid,
                kernels=len(ks),
                first_correct_index=correct.index if correct else None,
                tokens_to_first_correct=correct.cum_tokens if correct else None,
                cost_to_first_correct=correct.cum_cost_usd if correct else None,
                first_fast_index=faster.index if faster else None,
                tokens_to_first_fast=faster.cum_tokens if faster else None,
                cost_to_first_fast=faster.cum_cost_usd if faster else None,
                pending=sum(1 for k in ks if k.outcome is None),
            )
        )
    last = ordered[-1][1] if ordered else None
    solved = sum(1 for r in rows if r.first_correct_index is not None)
    fast = sum(1 for r in rows if r.first_fast_index is not None)
    fast_at_n = fast / len(rows) if rows else None
    total_cost = last.cum_cost_usd if last else None
    total_tokens = last.cum_tokens if last else None
    return AgentCost(
        workloads=rows,
        n=max((r.kernels for r in rows), default=0),
        solved=solved,
        fast=fast,
        pending=sum(r.pending for r in rows),
        total_tokens=total_tokens,
        total_cost_usd=total_cost,
        fast_at_n=fast_at_n,
        fast_at_n_per_dollar=per_dollar(fast_at_n, total_cost),
        cost_per_solved=_ratio(total_cost, solved),
        tokens_per_solved=_ratio(total_tokens, solved),
    )
