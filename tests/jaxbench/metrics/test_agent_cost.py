"""Cost and tokens per solved workload (jaxbench.metrics.agent_cost): measured verdicts only."""

import pytest

from jaxbench.metrics.agent_cost import KernelSpend, agent_cost


def k(w, i, order, tokens, cost, outcome):
    return KernelSpend(workload=w, index=i, order=order, cum_tokens=tokens, cum_cost_usd=cost, outcome=outcome)


def test_cost_to_first_correct_and_fast_per_dollar():
    c = agent_cost(
        [
            k("12p", 0, 0, 1200, 0.01, "compile_error"),
            k("12p", 1, 1, 4000, 0.04, "correct_slower"),
            k("8p", 0, 2, 5000, 0.05, "correct_faster"),
            k("12p", 2, 3, 7000, 0.08, "correct_faster"),
            k("13p", 0, 4, 9000, 0.10, "incorrect"),
        ]
    )
    rows = {r.workload: r for r in c.workloads}
    assert (
        rows["12p"].first_correct_index,
        rows["12p"].tokens_to_first_correct,
        rows["12p"].cost_to_first_correct,
    ) == (1, 4000, 0.04)
    assert (rows["12p"].first_fast_index, rows["12p"].cost_to_first_fast) == (2, 0.08)
    assert rows["8p"].cost_to_first_correct == 0.05 and rows["13p"].first_correct_index is None
    assert (c.solved, c.fast, c.n, c.total_tokens, c.total_cost_usd) == (2, 2, 3, 9000, 0.10)
    assert c.fast_at_n == pytest.approx(2 / 3)
    assert c.fast_at_n_per_dollar == pytest.approx((2 / 3) / 0.10)
    assert c.cost_per_solved == pytest.approx(0.05) and c.tokens_per_solved == 4500


def test_only_measured_verdicts_count_and_unreported_usage_gives_no_ratio():
    c = agent_cost([k("12p", 0, 0, None, None, None), k("12p", 1, 1, None, None, "correct_faster")])
    assert c.solved == 1 and c.pending == 1 and not c.reported
    assert c.cost_per_solved is None and c.fast_at_n_per_dollar is None and c.fast_at_n == 1.0
    pending = agent_cost([k("12p", 0, 0, 10, 0.5, None)])  # the agent may claim it, the portal has not measured it
    assert pending.solved == 0 and pending.fast_at_n == 0.0 and pending.cost_per_solved is None
    assert pending.workloads[0].cost_to_first_correct is None


def test_zero_cost_and_empty_input():
    free = agent_cost([k("12p", 0, 0, 10, 0.0, "correct_faster")])
    assert free.fast_at_n_per_dollar is None and free.cost_per_solved == 0.0  # no ratio over $0
    empty = agent_cost([])
    assert (empty.workloads, empty.solved, empty.total_cost_usd, empty.fast_at_n) == ([], 0, None, None)


def test_the_last_kernel_in_trajectory_order_gives_the_totals_whatever_the_input_order():
    c = agent_cost([k("8p", 0, 5, 900, 0.9, None), k("12p", 0, 1, 100, 0.1, "correct_tie")])
    assert (c.total_tokens, c.total_cost_usd, c.solved, c.fast) == (900, 0.9, 1, 0)
