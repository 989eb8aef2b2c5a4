"""Unfloored geomean and raw gap to expert: hand-computed values."""

import math

import pytest

from jaxbench import metrics
from jaxbench.metrics import INDEPENDENT, from_sequence


def _agg(*results):
    return from_sequence(results)


CPU_A = _agg(("correct_slower", 0.8))  # both below 1: floored ties at 1.0
CPU_B = _agg(("correct_slower", 0.5))
WRONG = _agg(("incorrect", None))


def test_all_below_one_floored_ties_unfloored_differs():
    assert metrics.floored_geomean([CPU_A, CPU_A]) == metrics.floored_geomean([CPU_B, CPU_B]) == 1.0
    assert metrics.unfloored_geomean([CPU_A, CPU_A]) == pytest.approx(0.8)
    assert metrics.unfloored_geomean([CPU_A, CPU_B]) == pytest.approx(math.sqrt(0.4))  # 0.632...


def test_unsolved_and_missing_workloads_contribute_nothing():
    # over the solved workloads only: 0.8 and 2.0 -> sqrt(1.6)
    aggs = [CPU_A, _agg(("correct_faster", 2.0)), WRONG, None]
    assert metrics.unfloored_geomean(aggs) == pytest.approx(math.sqrt(1.6))
    assert metrics.unfloored_geomean([WRONG, None]) is None


def test_sequential_budget_uses_the_best_within_n():
    a = _agg(("incorrect", None), ("correct_slower", 0.5), ("correct_slower", 0.9))
    assert metrics.unfloored_geomean([a], n=1) is None
    assert metrics.unfloored_geomean([a], n=2) == pytest.approx(0.5)
    assert metrics.unfloored_geomean([a]) == pytest.approx(0.9)


def test_independent_mode_conditions_on_solved():
    # 3 samples: wrong, 0.5, 0.9. N = 1: each value drawn with p 1/3; P(solved) = 2/3.
    a = _agg(("incorrect", None), ("correct_slower", 0.5), ("correct_slower", 0.9))
    assert metrics.unfloored_log_sum(a, 1, INDEPENDENT) == pytest.approx((math.log(0.5) + math.log(0.9)) / 3)
    assert metrics.unfloored_geomean([a], 1, INDEPENDENT) == pytest.approx(math.sqrt(0.45))
    # N = 2: subsets {w,.5} {w,.9} {.5,.9}: best .5, .9, .9, all solved
    assert metrics.unfloored_geomean([a], 2, INDEPENDENT) == pytest.approx((0.5 * 0.9 * 0.9) ** (1 / 3))
    assert metrics.unfloored_geomean([a], None, INDEPENDENT) == pytest.approx(0.9)


def test_unfloored_geomean_of_skips_none():
    assert metrics.unfloored_geomean_of([0.5, None, 2.0]) == pytest.approx(1.0)
    assert metrics.unfloored_geomean_of([None]) is None
    with pytest.raises(ValueError):
        metrics.unfloored_geomean_of([0.0])


def test_raw_gap_below_one_when_slower_than_expert_both_below_one():
    # kernel 0.8x, expert 0.9x: the floored gap reads 100%, the raw one 0.8 / 0.9
    assert metrics.expert_gaps([CPU_A], [0.9]) == [1.0]
    assert metrics.raw_expert_gaps([CPU_A], [0.9]) == [pytest.approx(0.8 / 0.9)]
    assert metrics.raw_expert_gaps([CPU_A, WRONG, CPU_B], [None, 2.0, 0.25]) == [None, None, pytest.approx(2.0)]
