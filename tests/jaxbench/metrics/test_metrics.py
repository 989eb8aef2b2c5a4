"""Tests for jaxbench.metrics: hand-computed cases (arithmetic in the comments), folding in
any order (seeded random permutations), and a brute-force reference that applies DESIGN.md's
definitions directly to raw samples (independent mode: every N-subset enumerated)."""

from __future__ import annotations

import itertools
import math
import random
import re
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from jaxbench import metrics as m
from jaxbench.metrics import INDEPENDENT, SEQUENTIAL, WorkloadAggregate
from leaderboard import study

REL = 1e-12
approx = lambda x: pytest.approx(x, rel=REL, abs=1e-15)

# ---------------------------------------------------------------------------------------------
# Hand-computed fixtures
# ---------------------------------------------------------------------------------------------

# W1: index: 0 compile_error, 1 slower 0.8, 2 faster 1.5, 3 incorrect, 4 faster 1.2, 5 faster 2.0
W1 = [
    ("compile_error", None),
    ("correct_slower", 0.8),
    ("correct_faster", 1.5),
    ("incorrect", None),
    ("correct_faster", 1.2),
    ("correct_faster", 2.0),
]
# W2: every sample failed.
W2 = [("runtime_error", None), ("timeout", None), ("rejected", None)]
# W3: index 0 faster 4.0, index 1 slower 0.5.
W3 = [("correct_faster", 4.0), ("correct_slower", 0.5)]


def _set_a():
    return [m.from_sequence(W1), m.from_sequence(W2), m.from_sequence(W3)]


def test_aggregate_fields_hand_case():
    a = m.from_sequence(W1)
    # records: 0.8 at 1 (first correct), 1.5 at 2 (> 0.8), 1.2 at 4 is not (< 1.5), 2.0 at 5
    assert a.progression == ((1, 0.8), (2, 1.5), (5, 2.0))
    assert a.n_samples == 6 and a.n_correct == 4 and a.n_faster == 3
    assert a.best_speedup == 2.0
    assert a.first_correct_index == 1 and a.first_faster_index == 2 and a.max_index == 5
    assert a.correct_speedups == (0.8, 1.2, 1.5, 2.0)
    assert a.outcome_counts == {
        "compile_error": 1,
        "runtime_error": 0,
        "timeout": 0,
        "incorrect": 1,
        "correct_slower": 1,
        "correct_tie": 0,
        "correct_faster": 3,
        "rejected": 0,
    }
    a.validate()
    b = m.from_sequence(W2)
    assert b.progression == () and b.best_speedup is None and b.first_correct_index is None
    assert b.n_samples == 3 and b.max_index == 2
    assert WorkloadAggregate().max_index is None


def test_workload_speedup_sequential_hand_case():
    a = m.from_sequence(W1)
    # N=0: nothing -> 1; N=1: only a compile error -> 1; N=2: max(1, 0.8) = 1;
    # N=3..5: 1.5 (1.2 at index 4 does not beat it); N=6: 2.0; all: 2.0
    expected = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.5, 4: 1.5, 5: 1.5, 6: 2.0, 7: 2.0, None: 2.0}
    for n, s in expected.items():
        assert m.workload_speedup(a, n) == s
    assert m.best_within(a, 2) == 0.8 and m.best_within(a, 1) is None
    assert m.workload_speedup(None, 5) == 1.0
    assert m.workload_speedup(m.from_sequence(W2)) == 1.0


def test_set_metrics_sequential_hand_case():
    aggs = _set_a()
    # geomean(6) = exp((ln 2 + ln 1 + ln 4) / 3) = (2*1*4)^(1/3) = 8^(1/3) = 2
    assert m.floored_geomean(aggs, 6) == approx(2.0)
    assert m.floored_geomean(aggs) == approx(2.0)
    # geomean(3) = (1.5 * 1 * 4)^(1/3) = 6^(1/3)
    assert m.floored_geomean(aggs, 3) == approx(6 ** (1 / 3))
    # geomean(1) = (1 * 1 * 4)^(1/3) = 4^(1/3)
    assert m.floored_geomean(aggs, 1) == approx(4 ** (1 / 3))
    # geomean(0) = 1
    assert m.floored_geomean(aggs, 0) == 1.0
    # solved: N=1 only W3 (index 0); N=2 also W1 (first correct at 1); W2 never
    assert [m.solved(aggs, n) for n in (0, 1, 2, 6, None)] == [0, 1, 2, 2, 2]
    # fast@N: W3 from N=1; W1 first faster at index 2 -> from N=3
    assert m.fast_p(aggs, 1) == approx(1 / 3)
    assert m.fast_p(aggs, 2) == approx(1 / 3)
    assert m.fast_p(aggs, 3) == approx(2 / 3)
    assert m.fast_p(aggs) == approx(2 / 3)
    # fast_2.0: W1's best is exactly 2.0, not > 2.0; W3 4.0 > 2.0 -> 1/3
    assert m.fast_p(aggs, 6, p=2.0) == approx(1 / 3)
    # fast_1.5: W1's first record above 1.5 is (5, 2.0): N=5 -> 1/3, N=6 -> 2/3
    assert m.fast_p(aggs, 5, p=1.5) == approx(1 / 3)
    assert m.fast_p(aggs, 6, p=1.5) == approx(2 / 3)
    # fast_0.5: W1's first record above 0.5 is (1, 0.8): N=1 -> 1/3 (W3), N=2 -> 2/3
    assert m.fast_p(aggs, 1, p=0.5) == approx(1 / 3)
    assert m.fast_p(aggs, 2, p=0.5) == approx(2 / 3)
    # fast_0 = solved / |W|
    for n in range(0, 8):
        assert m.fast_p(aggs, n, p=0.0) == approx(m.solved(aggs, n) / 3)
    # curves run to max index + 1 = 6
    assert m.curve_length(aggs) == 6
    assert [n for n, _ in m.fast_p_curve(aggs)] == [1, 2, 3, 4, 5, 6]
    assert [v for _, v in m.fast_p_curve(aggs)] == [approx(x) for x in (1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3)]
    assert m.solved_curve(aggs) == [(1, 1), (2, 2), (3, 2), (4, 2), (5, 2), (6, 2)]
    # geomean curve: N=1,2: 4^(1/3); N=3..5: 6^(1/3); N=6: 2
    g = [v for _, v in m.geomean_curve(aggs)]
    assert g == [approx(x) for x in (4 ** (1 / 3), 4 ** (1 / 3), 6 ** (1 / 3), 6 ** (1 / 3), 6 ** (1 / 3), 2.0)]
    assert m.fast_p_curve(aggs, n_max=2) == [(1, approx(1 / 3)), (2, approx(1 / 3))]
    assert m.fast_p_curve(aggs, n_max=0) == []


def test_workload_without_samples_counts_one():
    # [W3, none, none, empty]: geomean = (4 * 1 * 1 * 1)^(1/4) = sqrt(2); solved 1; fast 1/4
    aggs = [m.from_sequence(W3), None, None, WorkloadAggregate()]
    assert m.floored_geomean(aggs) == approx(math.sqrt(2))
    assert m.solved(aggs) == 1
    assert m.fast_p(aggs) == approx(0.25)
    by_id = {"1p": m.from_sequence(W3), "99x": m.from_sequence(W1)}
    sel = m.select(by_id, ["1p", "2p", "3p", "4p"])  # 99x is outside the set: ignored
    assert sel[0] == by_id["1p"] and sel[1:] == [WorkloadAggregate()] * 3
    assert m.floored_geomean(sel) == approx(math.sqrt(2))
    with pytest.raises(ValueError):
        m.select(by_id, [])
    with pytest.raises(ValueError):
        m.select(by_id, ["1p", "1p"])
    with pytest.raises(ValueError):
        m.floored_geomean([])


def test_outcome_shares_hand_case():
    aggs = _set_a()
    # 11 samples: compile 1, runtime 1, timeout 1, incorrect 1, rejected 1,
    # slower 2 (0.8, 0.5), faster 4 (1.5, 1.2, 2.0, 4.0)
    counts = m.outcome_counts(aggs)
    assert counts == {
        "compile_error": 1,
        "runtime_error": 1,
        "timeout": 1,
        "incorrect": 1,
        "correct_slower": 2,
        "correct_tie": 0,
        "correct_faster": 4,
        "rejected": 1,
    }
    shares = m.outcome_shares(aggs)
    assert shares["correct_faster"] == approx(4 / 11)
    assert shares["correct_slower"] == approx(2 / 11)
    assert math.fsum(shares.values()) == approx(1.0)
    # correct = 2 + 4 = 6 of 11
    assert m.per_sample_correctness(aggs) == approx(6 / 11)
    # API/runtime failures = compile 1 + runtime 1 = 2 of 11
    assert m.api_runtime_failure_share(aggs) == approx(2 / 11)
    assert m.per_sample_correctness([None]) is None
    assert m.outcome_shares([WorkloadAggregate()]) is None
    assert m.api_runtime_failure_share([None]) is None


# ---------------------------------------------------------------------------------------------
# Independent (best-of-N) mode, hand-computed
# ---------------------------------------------------------------------------------------------

# B: n = 4 samples: slower 0.5, compile error, faster 2.0, faster 3.0 -> c_correct = 3, c_fast = 2
B = [("correct_slower", 0.5), ("compile_error", None), ("correct_faster", 2.0), ("correct_faster", 3.0)]


def test_pass_at_k_hand():
    # 1 - C(2,1)/C(4,1) = 1 - 2/4 ; 1 - C(2,2)/C(4,2) = 1 - 1/6 ; C(2,3) = 0 -> 1
    assert m.pass_at_k(4, 2, 1) == 0.5
    assert m.pass_at_k(4, 2, 2) == approx(5 / 6)
    assert m.pass_at_k(4, 2, 3) == 1.0
    assert m.pass_at_k(4, 2, 9) == 1.0 and m.pass_at_k(4, 0, 9) == 0.0  # N > n: full sample
    assert m.pass_at_k(4, 2, 0) == 0.0 and m.pass_at_k(0, 0, 0) == 0.0
    # 144 samples, 1 correct, N = 1: 1 - 143/144 = 1/144
    assert m.pass_at_k(144, 1, 1) == approx(1 / 144)
    with pytest.raises(ValueError):
        m.pass_at_k(3, 4, 1)


def test_independent_fast_and_solved_hand_case():
    b = m.from_sequence(B)
    ind = INDEPENDENT
    assert m.fast_p([b], 1, mode=ind) == 0.5  # 1 - 2/4
    assert m.fast_p([b], 2, mode=ind) == approx(5 / 6)  # 1 - 1/6
    assert m.fast_p([b], 3, mode=ind) == 1.0  # 1 - 0/4
    assert m.fast_p([b], 5, mode=ind) == 1.0  # N > n: full sample
    assert m.fast_p([b], None, mode=ind) == 1.0
    # p = 2.5: c = 1 (3.0): N=1: 1 - C(3,1)/C(4,1) = 1/4 ; N=2: 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert m.fast_p([b], 1, p=2.5, mode=ind) == approx(1 / 4)
    assert m.fast_p([b], 2, p=2.5, mode=ind) == approx(1 / 2)
    # p = 3.0: nothing is > 3.0
    assert m.fast_p([b], 4, p=3.0, mode=ind) == 0.0
    # solved: c = 3: N=1: 1 - C(1,1)/C(4,1) = 3/4 ; N=2: 1 - C(1,2)/C(4,2) = 1
    assert m.solved([b], 1, mode=ind) == approx(3 / 4)
    assert m.solved([b], 2, mode=ind) == 1.0
    # with an empty second workload: fast@1 = (1/2 + 0) / 2 ; solved@1 = 3/4 + 0
    assert m.fast_p([b, None], 1, mode=ind) == approx(1 / 4)
    assert m.solved([b, None], 1, mode=ind) == approx(3 / 4)
    assert m.solved_curve([b], mode=ind) == [(1, approx(0.75)), (2, 1.0), (3, 1.0), (4, 1.0)]
    assert m.curve_length([b, None], mode=ind) == 4
    # the same workload in sequential order: first faster sample has index 2
    assert [m.fast_p([b], n) for n in (1, 2, 3)] == [0.0, 0.0, 1.0]


def test_independent_expected_geomean_hand_case():
    b = m.from_sequence(B)
    ind = INDEPENDENT
    # floored values sorted: [1, 1, 2, 3]; P(max of an N-subset = v_k) = C(k-1, N-1) / C(4, N)
    # N=1: weights 1/4 each -> E ln = (ln 2 + ln 3) / 4 -> exp = 6^(1/4)
    assert m.workload_speedup(b, 1, ind) == approx(6 ** (1 / 4))
    # N=2: weights 0, 1/6, 2/6, 3/6 -> (2 ln 2 + 3 ln 3) / 6 -> (4 * 27)^(1/6) = 108^(1/6)
    # (the 6 pairs have maxima 1, 2, 3, 2, 3, 3)
    assert m.expected_log_speedup(b, 2, ind) == approx((2 * math.log(2) + 3 * math.log(3)) / 6)
    assert m.workload_speedup(b, 2, ind) == approx(108 ** (1 / 6))
    # N=3: weights C(k-1,2)/4 = 0, 0, 1/4, 3/4 -> (ln 2 + 3 ln 3) / 4 -> 54^(1/4)
    assert m.workload_speedup(b, 3, ind) == approx(54 ** (1 / 4))
    # N=4 and N > n: the best, 3
    assert m.workload_speedup(b, 4, ind) == approx(3.0)
    assert m.workload_speedup(b, 10, ind) == approx(3.0)
    assert m.workload_speedup(b, 0, ind) == 1.0
    # set [B, empty]: exp((ln 108 / 6 + 0) / 2) = 108^(1/12)
    assert m.floored_geomean([b, None], 2, INDEPENDENT) == approx(108 ** (1 / 12))
    # the full-sample value is the sequential one
    assert m.floored_geomean([b, None], None, INDEPENDENT) == approx(m.floored_geomean([b, None]))


# ---------------------------------------------------------------------------------------------
# Folding out of order
# ---------------------------------------------------------------------------------------------


def test_progression_out_of_order_hand_case():
    a = m.update(None, 5, "correct_faster", 2.0)
    assert a.progression == ((5, 2.0),)
    # index 2 has nothing before it -> record; 2.0 at 5 still beats 1.5 -> kept
    a = m.update(a, 2, "correct_faster", 1.5)
    assert a.progression == ((2, 1.5), (5, 2.0))
    # index 4: running best before 4 is 1.5 >= 1.2 -> not a record, nothing changes
    a = m.update(a, 4, "correct_faster", 1.2)
    assert a.progression == ((2, 1.5), (5, 2.0))
    # index 1: 0.8 is first -> record
    a = m.update(a, 1, "correct_slower", 0.8)
    assert a.progression == ((1, 0.8), (2, 1.5), (5, 2.0))
    assert (a.first_correct_index, a.first_faster_index, a.best_speedup) == (1, 2, 2.0)
    a = m.update(a, 3, "incorrect")
    a = m.update(a, 0, "compile_error")
    assert a == m.from_sequence(W1)
    # W1 without its index 0, then a 3.0 at index 0 dominates every later record
    rest = m.from_samples((i, o, s) for i, (o, s) in enumerate(W1) if i > 0)
    assert rest.progression == ((1, 0.8), (2, 1.5), (5, 2.0))
    a0 = m.update(rest, 0, "correct_faster", 3.0)
    assert a0.progression == ((0, 3.0),)
    assert (a0.first_correct_index, a0.first_faster_index, a0.best_speedup) == (0, 0, 3.0)
    # a later 3.0 at index 6 is a new last record
    assert m.update(a, 6, "correct_faster", 3.0).progression[-1] == (6, 3.0)
    b = m.update(None, 9, "correct_faster", 1.5)
    b = m.update(b, 3, "correct_faster", 2.5)  # drops (9, 1.5)
    assert b.progression == ((3, 2.5),)
    assert b.first_faster_index == 3 and b.best_speedup == 2.5
    # ties: an equal speedup earlier in order becomes the record, the later one is dropped
    t = m.update(None, 3, "correct_faster", 2.0)
    t = m.update(t, 1, "correct_faster", 2.0)
    assert t.progression == ((1, 2.0),)
    t = m.update(t, 2, "correct_faster", 2.0)  # equal to the running best: no record
    assert t.progression == ((1, 2.0),)
    assert t.n_faster == 3 and t.correct_speedups == (2.0, 2.0, 2.0)


def test_update_is_pure():
    a = m.from_sequence(W1)
    before = a.to_dict()
    b = m.update(a, 6, "correct_faster", 9.0)
    assert a.to_dict() == before and b is not a
    assert b.best_speedup == 9.0 and a.best_speedup == 2.0


def test_update_rejects_bad_input():
    a = m.from_sequence(W1)
    with pytest.raises(ValueError):
        m.update(a, 7, "correct_faster", 0.9)  # faster must be > 1
    with pytest.raises(ValueError):
        m.update(a, 7, "correct_faster", 1.0)  # exactly 1 is not faster
    with pytest.raises(ValueError):
        m.update(a, 7, "correct_slower", 1.01)
    assert m.update(a, 7, "correct_slower", 1.0).n_faster == 3  # exactly 1.0 is slower
    for bad in (None, float("nan"), float("inf"), 0.0, -1.0, True, "2"):
        with pytest.raises(ValueError):
            m.update(a, 7, "correct_faster", bad)
    with pytest.raises(ValueError):
        m.update(a, 7, "passed", None)
    for bad_index in (-1, 1.0, True, None):
        with pytest.raises(ValueError):
            m.update(a, bad_index, "incorrect")
    with pytest.raises(ValueError):
        m.update(a, 5, "incorrect")  # index 5 is in the progression
    with pytest.raises(ValueError):
        m.from_samples([(0, "incorrect", None), (0, "timeout", None)])
    # a speedup on a non-correct sample is ignored
    assert m.update(None, 0, "incorrect", 5.0).best_speedup is None
    with pytest.raises(ValueError):
        m.floored_geomean([a], mode="greedy")
    with pytest.raises(ValueError):
        m.floored_geomean([a], n=-1)


# ---------------------------------------------------------------------------------------------
# Brute-force reference straight from the definitions
# ---------------------------------------------------------------------------------------------


def _correct(outcome):
    return outcome in ("correct_slower", "correct_tie", "correct_faster")


def _low(x):
    """The conservative bound of a brute-force sample (index, outcome, speedup, low): the
    interval's low end, or the point for a row timed before intervals existed."""
    return x[3] if x[3] is not None else x[2]


def ref_best(samples, n):
    vals = [s for i, o, s, _ in samples if _correct(o) and (n is None or i < n)]
    return max(vals) if vals else None


def ref_s(samples, n):
    b = ref_best(samples, n)
    return 1.0 if b is None else max(1.0, b)


def ref_solved(samples, n):
    return any(_correct(o) and (n is None or i < n) for i, o, s, _ in samples)


def ref_fast(samples, n, p):
    """Faster than p means the interval's low end above p (the conservative rule)."""
    return any(_correct(x[1]) and (n is None or x[0] < n) and _low(x) > p for x in samples)


def ref_independent(samples, k, qualifies):
    """Exact fraction of k-subsets holding a qualifying sample; N > n: the full sample."""
    n = len(samples)
    k = min(k, n)
    subsets = list(itertools.combinations(samples, k))
    if n == 0 or k == 0:
        return Fraction(0)
    return Fraction(sum(any(qualifies(x) for x in sub) for sub in subsets), len(subsets))


def ref_independent_log(samples, k):
    n = len(samples)
    if n == 0 or k == 0:
        return 0.0
    k = min(k, n)
    subsets = list(itertools.combinations(samples, k))
    return math.fsum(math.log(ref_s(list(sub), None)) for sub in subsets) / len(subsets)


SPEEDS = (0.5, 0.8, 1.0, 1.2, 1.5, 2.0, 3.0)
PS = (0.0, 0.7, 0.9, 1.0, 1.2, 1.5, 2.5, 5.0)


def random_samples(rng, n, gaps=False):
    """(index, outcome, speedup, low) samples: faster/slower rows with an interval or without
    one (timed before intervals existed), ties whose point lies on either side of 1."""
    indices = sorted(rng.sample(range(3 * n + 1), n)) if gaps else list(range(n))
    out = []
    for i in indices:
        o = rng.choice(m.OUTCOMES + ("correct_faster", "correct_slower", "correct_tie"))
        legacy = rng.random() < 0.3
        if o == "correct_faster":
            s = rng.choice([x for x in SPEEDS if x > 1] + [1 + rng.random() * 3])
            low = None if legacy else rng.choice([1 + (s - 1) * rng.random(), s])
        elif o == "correct_slower":
            s = rng.choice([x for x in SPEEDS if x <= 1] + [0.1 + rng.random() * 0.9])
            low = None if legacy else s * rng.choice([0.5, 0.9, 1.0])
        elif o == "correct_tie":
            s = rng.choice([0.9, 1.0, 1.1, 1.2, 0.8 + rng.random() * 0.6])
            low = min(s, rng.choice([0.7, 0.95, 1.0]))
        else:
            s = rng.choice([None, 2.0])  # ignored for non-correct outcomes
            low = None
        out.append((i, o, s, low))
    return out


def test_fold_any_order_equals_ordered_build():
    rng = random.Random(20240531)
    for trial in range(400):
        samples = random_samples(rng, rng.randint(0, 14), gaps=trial % 3 == 0)
        ordered = m.from_samples(samples)
        ordered.validate()
        if all(i == k for k, (i, *_) in enumerate(samples)):
            assert ordered == m.from_sequence([(o, s, lo) for _, o, s, lo in samples])
        for _ in range(6):
            perm = samples[:]
            rng.shuffle(perm)
            agg = WorkloadAggregate()
            for i, o, s, lo in perm:
                agg = m.update(agg, i, o, s, lo)
                agg.validate()  # every intermediate state is consistent
            assert agg == ordered
        assert WorkloadAggregate.from_dict(ordered.to_dict()) == ordered
        # the progression is exactly the records of the ordered sample list
        best, records = None, []
        for i, o, s, _ in samples:
            if _correct(o) and (best is None or s > best):
                best = s
                records.append((i, s))
        assert ordered.progression == tuple(records)


def test_metrics_match_reference_per_workload():
    rng = random.Random(7)
    for trial in range(250):
        samples = random_samples(rng, rng.randint(0, 8), gaps=trial % 4 == 0)
        agg = m.from_samples(samples)
        top = (agg.max_index + 1 if agg.max_index is not None else 0) + 2
        for n in list(range(0, top)) + [None]:
            assert m.best_within(agg, n) == ref_best(samples, n)
            assert m.workload_speedup(agg, n) == ref_s(samples, n)
            assert m.solve_probability(agg, n) == float(ref_solved(samples, n))
            for p in PS:
                assert m.fast_probability(agg, n, p) == float(ref_fast(samples, n, p)), (n, p)
        for k in range(0, len(samples) + 3):
            assert m.solve_probability(agg, k, INDEPENDENT) == approx(
                float(ref_independent(samples, k, lambda x: _correct(x[1])))
            )
            for p in PS:
                got = m.fast_probability(agg, k, p, INDEPENDENT)
                want = ref_independent(samples, k, lambda x: _correct(x[1]) and _low(x) > p)
                assert got == approx(float(want)), (k, p)
            assert m.expected_log_speedup(agg, k, INDEPENDENT) == approx(ref_independent_log(samples, k))


def test_metrics_match_reference_per_set():
    rng = random.Random(11)
    for _ in range(60):
        per_w = [random_samples(rng, rng.randint(0, 7)) for _ in range(rng.randint(1, 5))]
        aggs = [m.from_samples(s) for s in per_w]
        nmax = max([len(s) for s in per_w])
        for n in list(range(0, nmax + 2)) + [None]:
            want_g = math.exp(math.fsum(math.log(ref_s(s, n)) for s in per_w) / len(per_w))
            assert m.floored_geomean(aggs, n) == approx(want_g)
            assert m.solved(aggs, n) == sum(ref_solved(s, n) for s in per_w)
            for p in PS:
                assert m.fast_p(aggs, n, p) == approx(sum(ref_fast(s, n, p) for s in per_w) / len(per_w))
        assert m.curve_length(aggs) == nmax
        assert m.fast_p_curve(aggs) == [(n, approx(m.fast_p(aggs, n))) for n in range(1, nmax + 1)]
        for k in range(1, nmax + 2):
            want = math.exp(math.fsum(ref_independent_log(s, k) for s in per_w) / len(per_w))
            assert m.floored_geomean(aggs, k, INDEPENDENT) == approx(want)


def test_sequential_curves_are_monotone():
    rng = random.Random(3)
    for _ in range(50):
        aggs = [m.from_samples(random_samples(rng, rng.randint(0, 10))) for _ in range(4)]
        for mode in (SEQUENTIAL, INDEPENDENT):
            for curve in (
                m.fast_p_curve(aggs, mode=mode),
                m.solved_curve(aggs, mode=mode),
                m.geomean_curve(aggs, mode=mode),
            ):
                vals = [v for _, v in curve]
                assert all(a <= b + 1e-12 for a, b in zip(vals, vals[1:]))


# ---------------------------------------------------------------------------------------------
# Gap to expert
# ---------------------------------------------------------------------------------------------


def test_expert_gap_hand_case():
    # S: sparse attention 2.81 (agent), ragged paged attention failed, a third at 1.5
    aggs = [
        m.from_sequence([("correct_faster", 2.81)]),
        m.from_sequence([("compile_error", None)]),
        m.from_sequence([("correct_faster", 1.5)]),
    ]
    experts = [0.86, 6.91, 3.0]
    # per workload: 2.81 / max(1, 0.86) = 2.81 ; 1 / 6.91 ; 1.5 / 3 = 0.5
    gaps = m.expert_gaps(aggs, experts)
    assert gaps == [approx(2.81), approx(1 / 6.91), approx(0.5)]
    # ratio = (2.81 * 1 * 1.5)^(1/3) / (1 * 6.91 * 3)^(1/3) = (4.215 / 20.73)^(1/3)
    ratio = m.expert_ratio(aggs, experts)
    assert ratio == approx((4.215 / 20.73) ** (1 / 3))
    # = geometric mean of the per-workload gaps
    assert ratio == approx(math.exp(math.fsum(math.log(g) for g in gaps) / 3))
    # expert floored geomean: (1 * 6.91 * 3)^(1/3); None counts 1
    assert m.floored_geomean_of(experts) == approx(20.73 ** (1 / 3))
    assert m.floored_geomean_of([None, 4.0]) == approx(2.0)
    with pytest.raises(ValueError):
        m.expert_gaps(aggs, experts[:2])


def test_published_expert_ratio_is_77_percent():
    tok = _row("tokamax", None, "expert")
    auto = _row("autocomp", "Gemini 3 Flash", "expert")
    # 1.60 / 2.08 = 0.76923... -> 77%
    assert round(auto["floored_geomean"] / tok["floored_geomean"], 2) == auto["fraction_of_expert"]
    # the published per-workload points through expert_gaps: sparse 2.81 / max(1, 0.86) = 2.81,
    # ragged paged attention (agent failed) 1 / 6.91
    pts = {(r["workload"], r["method"]): r["speedup"] for r in study.PUBLISHED_WORKLOAD_RESULTS}
    aggs = [m.from_sequence([("correct_faster", pts[("4p", "autocomp")])]), m.from_sequence([("incorrect", None)])]
    gaps = m.expert_gaps(aggs, [pts[("4p", "tokamax")], pts[("7p", "tokamax")]])
    assert gaps == [approx(2.81), approx(1 / 6.91)]


# ---------------------------------------------------------------------------------------------
# Timing noise
# ---------------------------------------------------------------------------------------------


def test_spread_and_speedup_interval_hand_case():
    # [1..5]: median 3, Q1 2, Q3 4 -> (4 - 2) / (2 * 3) = 1/3 ; min/max: (5 - 1) / 6 = 2/3
    assert m.relative_spread([5, 1, 4, 2, 3]) == approx(1 / 3)
    assert m.relative_spread([1, 2, 3, 4, 5], "minmax") == approx(2 / 3)
    assert m.relative_spread([2.5]) == 0.0
    assert m.timing_summary([1, 2, 3, 4, 5]) == (3, approx(1 / 3))
    # [1, 2, 3, 4]: median 2.5, Q1 = 1.75, Q3 = 3.25 (linear) -> 1.5 / 5 = 0.3
    assert m.relative_spread([1, 2, 3, 4]) == approx(0.3)
    with pytest.raises(ValueError):
        m.relative_spread([])
    with pytest.raises(ValueError):
        m.relative_spread([1, 2], "stdev")
    # baseline 10 ms +-10%, candidate 5 ms exact: [9/5, 11/5] = [1.8, 2.2]
    assert m.speedup_interval(10, 0.1, 5, 0.0) == (approx(1.8), approx(2.2))
    # candidate +-20%: [9 / 6, 11 / 4] = [1.5, 2.75]
    assert m.speedup_interval(10, 0.1, 5, 0.2) == (approx(1.5), approx(2.75))
    # no noise: the point value 2
    assert m.speedup_interval(10, 0.0, 5, 0.0) == (2.0, 2.0)
    lo, hi = m.speedup_interval(10, 1.5, 5, 1.0)
    assert lo == 0.0 and hi == math.inf
    with pytest.raises(ValueError):
        m.speedup_interval(0, 0.1, 5, 0.1)
    with pytest.raises(ValueError):
        m.speedup_interval(10, -0.1, 5, 0.1)


def test_geomean_interval_and_ties_hand_case():
    # floored lows [1, 2, 1] -> 2^(1/3); highs [1.5, 8, 1] -> 12^(1/3)
    lo, hi = m.geomean_interval([(0.5, 1.5), (2.0, 8.0), None])
    assert lo == approx(2 ** (1 / 3)) and hi == approx(12 ** (1 / 3))
    assert m.geomean_interval([(0.2, 0.9)]) == (1.0, 1.0)  # slower either way -> 1
    assert m.geomean_interval([(1.0, math.inf)])[1] == math.inf
    with pytest.raises(ValueError):
        m.geomean_interval([(2.0, 1.0)])
    # overlap or touch -> tied; a gap -> not tied
    assert m.tied((1.0, 1.2), (1.2, 1.5))
    assert m.tied((1.3, 1.4), (1.0, 2.0))
    assert not m.tied((1.0, 1.19), (1.2, 1.5))
    assert not m.tied((1.2, 1.5), (1.0, 1.19))
    # symmetric form: centres 1.10 and 1.30, half-widths 0.05 + 0.10 < 0.20 -> not tied
    assert not m.tied((1.05, 1.15), (1.20, 1.40))
    # half-widths 0.10 + 0.10 >= 0.20 -> tied
    assert m.tied((1.00, 1.20), (1.20, 1.40))
    with pytest.raises(ValueError):
        m.tied((2, 1), (1, 2))


# ---------------------------------------------------------------------------------------------
# Cost per solved workload
# ---------------------------------------------------------------------------------------------


def test_per_solved():
    assert m.per_solved([100, 200, 300], 2) == 300.0  # 600 / 2
    assert m.per_solved(1500, 3) == 500.0
    assert m.per_solved(1.5, 0.75) == 2.0  # expected solved (independent)
    assert m.per_solved([100, None, 300], 2) is None  # partly unreported
    assert m.per_solved([], 2) is None
    assert m.per_solved(None, 2) is None
    assert m.per_solved(600, 0) is None
    with pytest.raises(ValueError):
        m.per_solved([-1], 1)


# ---------------------------------------------------------------------------------------------
# Published results (reported, not evaluated)
# ---------------------------------------------------------------------------------------------


def _row(method, model, workload_set):
    rows = [
        r
        for r in study.PUBLISHED_RESULTS
        if (r["method"], r["model"], r["workload_set"]) == (method, model, workload_set)
    ]
    assert len(rows) == 1, (method, model, workload_set)
    return rows[0]


F, P = "Gemini 3 Flash", "Gemini 3.1 Pro"
# Transcribed from DESIGN.md "Facts from the source study":
# (method, model, set, solved, total, geomean, per-sample correctness, API/runtime failures)
EXPECTED = [
    ("best-of-n", F, "all", 13, 50, "1.01", None, "0.997"),
    ("iterative", F, "all", 32, 50, "1.18", "0.058", None),
    ("iterative+context", F, "all", 48, 50, "1.28", "0.373", "0.598"),
    ("autocomp", F, "all", 45, 50, "1.36", None, "0.558"),
    ("tokamax", None, "expert", None, 8, "2.08", None, None),
    ("autocomp", F, "expert", None, 8, "1.60", None, None),
    ("iterative", F, "five-kernel-subset", None, 5, "1.07", None, None),
    ("iterative", P, "five-kernel-subset", None, 5, "2.43", None, None),
    ("iterative+context", F, "five-kernel-subset", None, 5, "1.59", None, None),
    ("iterative+context", P, "five-kernel-subset", None, 5, "3.82", None, None),
    ("autocomp", F, "five-kernel-subset", None, 5, "2.35", None, None),
    ("autocomp", P, "five-kernel-subset", None, 5, "3.79", None, None),
]


def _dec(x):
    return None if x is None else Decimal(repr(x))


def test_published_results_exact():
    assert len(study.PUBLISHED_RESULTS) == len(EXPECTED)
    for method, model, wset, solved_, total, geo, psc, api in EXPECTED:
        r = _row(method, model, wset)
        assert r["status"] == study.REPORTED_NOT_EVALUATED == "reported-not-evaluated"
        assert r["hardware"] == "tpu-v6e"
        assert r["solved"] == solved_ and r["total"] == total
        assert _dec(r["floored_geomean"]) == Decimal(geo)
        assert _dec(r["per_sample_correctness"]) == (None if psc is None else Decimal(psc))
        assert _dec(r["api_runtime_failure_share"]) == (None if api is None else Decimal(api))
        assert r["source"]
    assert _dec(_row("autocomp", F, "expert")["fraction_of_expert"]) == Decimal("0.77")
    assert _row("best-of-n", F, "all")["sampling_mode"] == INDEPENDENT
    assert all(r["max_samples_per_workload"] == 144 for r in study.PUBLISHED_RESULTS if r["workload_set"] == "all")
    keys = set(study.PUBLISHED_RESULTS[0])
    assert all(set(r) == keys for r in study.PUBLISHED_RESULTS)
    pts = {(r["workload"], r["method"]): _dec(r["speedup"]) for r in study.PUBLISHED_WORKLOAD_RESULTS}
    assert pts == {
        ("7p", "tokamax"): Decimal("6.91"),
        ("7p", "autocomp"): None,
        ("4p", "tokamax"): Decimal("0.86"),
        ("4p", "autocomp"): Decimal("2.81"),
    }
    assert all(r["status"] == "reported-not-evaluated" for r in study.PUBLISHED_WORKLOAD_RESULTS)
    t = study.PUBLISHED_EXPERT_TUNING
    assert (t["block_size_configurations"], _dec(t["max_gain_over_default_block_sizes"]), t["expert_workloads"]) == (
        203,
        Decimal("2.79"),
        8,
    )


def test_published_results_match_design_md():
    text = (Path(__file__).resolve().parents[3] / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    facts = " ".join(text.split("## Facts from the source study")[1].split("## ")[0].split())
    # "best-of-N 13/50 correct, 1.01x; iterative refinement 32/50, 1.18x; ..."
    main = [(int(s), Decimal(g)) for s, g in re.findall(r"(\d+)/50[^;]*?, (\d+\.\d+)x", facts)]
    assert main == [(r[3], Decimal(r[5])) for r in EXPECTED[:4]]
    # "Per-sample correctness rose from 5.8% to 37.3%"
    lo, hi = re.search(r"rose from (\d+\.\d+)% to (\d+\.\d+)%", facts).groups()
    assert (Decimal(lo) / 100, Decimal(hi) / 100) == (Decimal("0.058"), Decimal("0.373"))
    # "API/runtime failures: 99.7% of best-of-N samples, 59.8% ..., 55.8% Autocomp"
    fails = [Decimal(x) / 100 for x in re.findall(r"(\d+\.\d+)%", facts.split("API/runtime failures:")[1][:120])]
    assert fails == [Decimal("0.997"), Decimal("0.598"), Decimal("0.558")]
    # "Tokamax geomean 2.08x vs XLA; Autocomp 1.60x (77% of expert)"
    tok, auto, pct = re.search(r"Tokamax geomean (\d+\.\d+)x.*?Autocomp (\d+\.\d+)x \((\d+)% of", facts).groups()
    assert (Decimal(tok), Decimal(auto), Decimal(pct) / 100) == (Decimal("2.08"), Decimal("1.60"), Decimal("0.77"))
    # "iterative 1.07x -> 2.43x, iterative+context 1.59x -> 3.82x, Autocomp 2.35x -> 3.79x"
    pro = re.findall(r"(\d+\.\d+)x -> (\d+\.\d+)x", facts)
    assert [(Decimal(a), Decimal(b)) for a, b in pro] == [
        (Decimal(EXPECTED[i][5]), Decimal(EXPECTED[i + 1][5])) for i in (6, 8, 10)
    ]
    # "Ragged paged attention: expert 6.91x ... Sparse attention: agent 2.81x vs Tokamax 0.86x."
    assert re.search(r"Ragged paged attention: expert 6\.91x, agent failed", facts)
    assert re.search(r"Sparse attention: agent 2\.81x vs Tokamax 0\.86x", facts)
    assert "203 configurations" in facts and "2.79x" in facts and "144 samples" in facts


# ---------------------------------------------------------------------------------------------
# Purity
# ---------------------------------------------------------------------------------------------


def test_module_imports_without_django():
    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys, jaxbench.metrics; "
        "bad = [k for k in sys.modules if k.split('.')[0] in ('django', 'numpy')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)


# ---------------------------------------------------------------------------------------------
# Ties and intervals, hand-computed
# ---------------------------------------------------------------------------------------------


def test_ties_are_correct_but_never_faster():
    # index 0: a tie whose point is above 1 (1.05 [0.97, 1.12]); 1: faster 1.3 [1.2, 1.4];
    # 2: a legacy faster row (no interval) 1.1; 3: slower 0.8 [0.7, 0.9]
    agg = m.from_samples(
        [
            (0, "correct_tie", 1.05, 0.97),
            (1, "correct_faster", 1.3, 1.2),
            (2, "correct_faster", 1.1),
            (3, "correct_slower", 0.8, 0.7),
        ]
    )
    agg.validate()
    assert agg.n_correct == 4 and agg.n_faster == 2 and agg.count("correct_tie") == 1
    assert agg.first_correct_index == 0 and agg.first_faster_index == 1
    # the geomean uses the point: after one sample the tie's 1.05 counts
    assert m.workload_speedup(agg, 1) == approx(1.05)
    assert m.floored_geomean([agg, None], 1) == approx(math.sqrt(1.05))
    # fast@1 is 0 (a tie is not faster), fast@2 is 1
    assert m.fast_p([agg], 1) == 0.0 and m.fast_p([agg], 2) == 1.0
    # fast_1.15: sample 1's low 1.2 > 1.15 counts; the tie's point does not
    assert m.fast_probability(agg, 2, 1.15) == 1.0 and m.fast_probability(agg, 1, 1.0) == 0.0
    # fast_1.25 needs a low above 1.25: none (1.3's low is 1.2; the legacy 1.1 is its point)
    assert m.fast_probability(agg, None, 1.25) == 0.0
    assert m.fast_probability(agg, None, 1.25, INDEPENDENT) == 0.0
    # independent, p = 1: c = 2 faster of n = 4; one draw: 2/4
    assert m.fast_probability(agg, 1, 1.0, INDEPENDENT) == approx(0.5)
    assert WorkloadAggregate.from_dict(agg.to_dict()) == agg


def test_outcome_must_agree_with_its_interval():
    with pytest.raises(ValueError):
        m.update(None, 0, "correct_faster", 1.3, 0.99)  # the interval reaches below 1
    with pytest.raises(ValueError):
        m.update(None, 0, "correct_tie", 1.3, 1.01)  # the interval lies above 1
    with pytest.raises(ValueError):
        m.update(None, 0, "correct_tie", 1.3)  # a tie needs its interval
    with pytest.raises(ValueError):
        m.update(None, 0, "correct_slower", 1.3, 0.9)  # slower with a point above 1
    with pytest.raises(ValueError):
        m.update(None, 0, "correct_faster", 1.3, 1.4)  # low above the point


def test_aggregates_stored_before_intervals_load_with_point_lows():
    old = m.from_sequence([("correct_faster", 1.5), ("correct_slower", 0.5)]).to_dict()
    old.pop("correct_lows")
    old.pop("low_progression")
    agg = WorkloadAggregate.from_dict(old)
    assert agg.correct_lows == (0.5, 1.5) and agg.low_progression == ((0, 1.5),)
    assert m.fast_probability(agg, 1, 1.2) == 1.0


def test_ties_over_a_workload_set_by_hand():
    # W_a: 0 tie 1.4 [0.9, ...], 1 incorrect, 2 faster 1.2 [1.05, ...]; W_b: 0 tie 0.95 [0.8, ...]
    a = m.from_samples([(0, "correct_tie", 1.4, 0.9), (1, "incorrect", None), (2, "correct_faster", 1.2, 1.05)])
    b = m.from_samples([(0, "correct_tie", 0.95, 0.8)])
    ws = [a, b]
    # sequential: both ties count as solved at once, neither as faster
    assert m.solved(ws, 1) == 2 and m.fast_p(ws, 1) == 0.0
    assert m.fast_p(ws, 3) == approx(0.5)  # W_a's sample 2: low 1.05 > 1
    # fast_1.1: W_a's lows are 0.9 and 1.05; neither is above 1.1 (the points 1.4 and 1.2 are)
    assert m.fast_p(ws, None, 1.1) == 0.0
    # the geomean takes points: W_a's tie 1.4 is its best, W_b's 0.95 floors to 1
    assert m.floored_geomean(ws, 1) == approx(math.sqrt(1.4))
    assert m.floored_geomean(ws, None) == approx(math.sqrt(1.4))
    assert m.best_within(a, None) == 1.4 and a.first_faster_index == 2
    # independent: W_a has n=3, 2 correct, 1 faster; W_b n=1, 1 correct, 0 faster
    assert m.fast_p(ws, 1, 1.0, INDEPENDENT) == approx((1 / 3 + 0) / 2)
    assert m.fast_p(ws, 2, 1.0, INDEPENDENT) == approx((1 - 1 / 3) / 2)
    assert m.solved(ws, 1, INDEPENDENT) == approx(2 / 3 + 1)
    # E[ln s_a(1)] = (ln 1 + ln 1.2 + ln 1.4) / 3; 2-subsets: {inc, 1.2}, {inc, 1.4}, {1.2, 1.4}
    assert m.floored_geomean(ws, 1, INDEPENDENT) == approx(math.exp((math.log(1.2) + math.log(1.4)) / 3 / 2))
    assert m.floored_geomean(ws, 2, INDEPENDENT) == approx(math.exp((math.log(1.2) + 2 * math.log(1.4)) / 3 / 2))
    assert m.outcome_counts(ws)["correct_tie"] == 2 and m.per_sample_correctness(ws) == approx(3 / 4)
