"""The exact-answer correctness rule, the paired-speedup interval and the outcome rules, on
hand-made arrays and samples (pure functions: no sandbox, no JAX)."""

import json

import ml_dtypes
import numpy as np
import pytest

from jaxbench import record
from jaxbench.verdict import rules as verdict
from jaxbench.verdict.numerics import (
    allclose_report,
    baseline_guard,
    exact_rule_report,
    keep_sampling,
    paired_speedup,
    resolution,
)

TOL = dict(atol=1e-2, rtol=1e-2)


def bf16(a):
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


# ------------------------------------------------------------------ the exact rule, by hand


def test_rule_by_hand():
    exact = np.array([1.0, 10.0, -2.0, 0.0], np.float32)
    xla = np.array([1.0, 10.3, -2.0, 0.0], np.float32)  # XLA is 0.3 off on element 1
    # allowance = atol + rtol*|exact| + |xla - exact| = [0.02, 0.41, 0.03, 0.01]
    ok = np.array([1.019, 9.6, -2.029, 0.0099], np.float32)
    rep = exact_rule_report(exact, xla, ok, **TOL)
    assert rep["passed"] and rep["n_fail"] == 0
    assert rep["candidate"]["max_abs"] == pytest.approx(0.4, abs=1e-5)
    assert rep["candidate"]["n_beyond_tol"] == 1  # element 1, beyond 0.11 alone
    assert rep["xla"]["max_abs"] == pytest.approx(0.3, abs=1e-5)
    assert rep["xla"]["n_beyond_tol"] == 1
    bad = np.array([1.0, 9.5, -2.0, 0.0], np.float32)  # 0.5 > 0.41 on element 1
    rep = exact_rule_report(exact, xla, bad, **TOL)
    assert not rep["passed"] and rep["n_fail"] == 1
    assert rep["worst_excess"] == pytest.approx(0.5 / 0.41, rel=1e-4)


def test_float32_internal_kernel_passes_where_the_old_rule_failed_it():
    """XLA (bf16 all the way) lands 0.015 from the truth on a few elements; a kernel that keeps
    float32 inside lands at the truth rounded to bf16. Against XLA alone (the old rule) the honest
    kernel fails; against the exact answer with XLA's error as allowance it passes."""
    rng = np.random.default_rng(0)
    exact = rng.uniform(0.1, 0.5, size=4096).astype(np.float32)
    xla = bf16(exact)
    xla[[5, 77, 901]] += np.float32(0.016)  # XLA's own rounding drift
    honest = bf16(exact)
    assert not allclose_report(xla, honest, **TOL)["passed"]
    rep = exact_rule_report(exact, xla, honest, **TOL)
    assert rep["passed"], rep
    assert rep["xla"]["n_beyond_tol"] == 3 and rep["candidate"]["n_beyond_tol"] == 0


@pytest.mark.parametrize("name", ["zeros", "garbage", "bf16_garbage", "pass_through", "scaled"])
def test_cheats_still_fail(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(2048).astype(np.float32)
    exact = np.tanh(x) * 3
    xla = bf16(exact)
    cand = {
        "zeros": np.zeros_like(exact),
        "garbage": rng.standard_normal(2048).astype(np.float32),
        "bf16_garbage": bf16(rng.standard_normal(2048) * 3),
        "pass_through": x,
        "scaled": exact * 1.05,
    }[name]
    assert not exact_rule_report(exact, xla, cand, **TOL)["passed"]


def test_nan_and_inf_never_pass_and_earn_no_allowance():
    exact = np.ones(4, np.float32)
    for bad in (np.nan, np.inf, -np.inf):
        cand = exact.copy()
        cand[2] = bad
        rep = exact_rule_report(exact, exact, cand, **TOL)
        assert not rep["passed"] and rep["n_nonfinite"] == 1 and rep["n_fail"] == 1
        json.dumps(rep, allow_nan=False)  # the record stays valid JSON
    # XLA overflowing to inf gives the candidate no unbounded allowance there
    xla = exact.copy()
    xla[1] = np.inf
    cand = exact.copy()
    cand[1] = 5.0
    assert not exact_rule_report(exact, xla, cand, **TOL)["passed"]
    assert exact_rule_report(exact, xla, exact, **TOL)["passed"]


def test_shapes_strict():
    with pytest.raises(ValueError):
        exact_rule_report(np.ones(3), np.ones(3), np.ones((3, 1)), **TOL)
    with pytest.raises(ValueError):
        exact_rule_report(np.ones(3), np.ones(3), np.ones(3), atol=-1, rtol=0)


def test_compare_set_reports_both_errors():
    exact = [np.array([1.0, 2.0], np.float32)]
    xla = [np.array([1.0, 2.05], np.float32)]
    ok, cat, errs, msg = verdict.compare_set(exact, xla, [np.array([1.0, 2.0], np.float32)], 1e-2, 1e-2)
    assert ok and cat is None and errs["xla"]["max_abs"] == pytest.approx(0.05, abs=1e-5)
    ok, cat, errs, msg = verdict.compare_set(exact, xla, [np.array([1.0, 2.2], np.float32)], 1e-2, 1e-2)
    assert not ok and cat == "not_allclose" and "XLA's" in msg and errs["n_fail"] == 1


# ------------------------------------------------------------------ timed outputs


def test_timed_output_verdicts():
    exact = [np.linspace(1, 2, 64, dtype=np.float32)]
    xla = [bf16(exact[0])]
    checked = [bf16(exact[0])]
    assert verdict.timed_output_verdict(exact, xla, checked, checked, None, 1e-2, 1e-2) is None
    # far outside the allowance: no precision effect
    far = [exact[0] * 2]
    out = verdict.timed_output_verdict(exact, xla, checked, far, None, 1e-2, 1e-2)
    assert out[0] == "rejected" and out[1] == "timed_output_mismatch"
    # just outside, and the checked output of the same inputs differs by more than the allowance
    near = [exact[0] + 0.04]
    out = verdict.timed_output_verdict(exact, xla, checked, near, None, 1e-2, 1e-2)
    assert out[0] == "rejected"
    # just outside, but the checked output was just as far: precision, not a different program
    out = verdict.timed_output_verdict(exact, xla, near, near, None, 1e-2, 1e-2)
    assert out[0] == "incorrect" and out[1] == "not_allclose"
    out = verdict.timed_output_verdict(exact, xla, checked, None, ("not_array", "x"), 1e-2, 1e-2)
    assert out[0] == "rejected"


# ------------------------------------------------------------------ the speedup interval


def test_paired_speedup_by_hand():
    b = [2.0, 2.0, 2.0, 2.0]
    c = [1.0, 1.0, 1.0, 1.0]
    est = paired_speedup(b, c)
    assert est["speedup"] == 2.0 and est["lo"] == 2.0 and est["hi"] == 2.0
    assert record.speed_outcome(est["lo"], est["hi"]) == "correct_faster"


def test_identical_programs_are_a_tie_and_load_cancels():
    rng = np.random.default_rng(7)
    load = np.exp(rng.normal(0, 0.4, 50))  # the same drift hits both in a pair
    b = 1e-3 * load * np.exp(rng.normal(0, 0.02, 50))
    c = 1e-3 * load * np.exp(rng.normal(0, 0.02, 50))
    est = paired_speedup(b, c)
    assert est["lo"] <= 1.0 <= est["hi"]
    assert record.speed_outcome(est["lo"], est["hi"]) == "correct_tie"
    assert 0.98 < est["speedup"] < 1.02


def test_clear_differences_are_told_apart():
    rng = np.random.default_rng(3)
    load = np.exp(rng.normal(0, 0.3, 50))
    b = 1e-3 * load * np.exp(rng.normal(0, 0.03, 50))
    faster = b / 1.3 * np.exp(rng.normal(0, 0.03, 50))
    slower = b * 1.3 * np.exp(rng.normal(0, 0.03, 50))
    f, s = paired_speedup(b, faster), paired_speedup(b, slower)
    assert record.speed_outcome(f["lo"], f["hi"]) == "correct_faster" and f["lo"] > 1.2
    assert record.speed_outcome(s["lo"], s["hi"]) == "correct_slower" and s["hi"] < 0.85


def test_interval_is_seeded_and_validated():
    rng = np.random.default_rng(11)
    b, c = rng.uniform(1, 2, 50), rng.uniform(1, 2, 50)
    assert paired_speedup(b, c) == paired_speedup(b, c)
    for bad in (([1.0], [1.0]), ([1.0, 2.0], [1.0]), ([1.0, -2.0], [1.0, 1.0]), ([1.0, np.nan], [1.0, 1.0])):
        with pytest.raises(ValueError):
            paired_speedup(*bad)


def test_outcome_and_faster_rules():
    assert record.speed_outcome(1.01, 1.2) == "correct_faster"
    assert record.speed_outcome(0.8, 0.99) == "correct_slower"
    assert record.speed_outcome(0.99, 1.01) == "correct_tie"
    assert record.speed_outcome(1.0, 1.3) == "correct_tie"  # the lower end must exceed 1
    assert record.faster_than(1.0, 1.4, lo=1.01) and not record.faster_than(1.0, 1.4, lo=0.99)
    assert record.faster_than(1.0, 1.4) and not record.faster_than(1.0, 0.9)  # old rows
    assert record.faster_than(1.5, 2.0, lo=1.6) and not record.faster_than(1.5, 2.0, lo=1.4)
    assert record.format_speedup(1.4221, 1.371, 1.48) == "1.42x [1.37, 1.48]"
    assert record.format_speedup(1.4221) == "1.42x" and record.format_speedup(None) == "-"
    assert set(record.CORRECT_OUTCOMES) < set(record.OUTCOMES)
    assert set(record.OUTCOME_LABELS) == set(record.OUTCOMES)


def test_baseline_guard():
    assert baseline_guard(1.2e-3, 1.0e-3, 1.5)["trusted"]
    assert baseline_guard(0.5e-3, 1.0e-3, 1.5)["trusted"]  # faster beside: only hurts
    g = baseline_guard(2.0e-3, 1.0e-3, 1.5)
    assert not g["trusted"] and g["ratio"] == pytest.approx(2.0) and "not trusted" in g["message"]
    with pytest.raises(ValueError):
        baseline_guard(0.0, 1.0, 1.5)


def test_block_bootstrap_keeps_its_promise_when_blocks_share_disturbances():
    """Calls are timed in blocks of 5 (all of one program's block, then the other's): a
    disturbance hits a whole block of one program only. Resampling single pairs then makes the
    interval too narrow and identical programs get labelled; resampling blocks keeps the
    false-label rate near the nominal 5%."""
    rng = np.random.default_rng(2026)
    labelled = {1: 0, 5: 0}
    runs = 200
    for _ in range(runs):

        def series():
            block_effect = np.repeat(np.exp(rng.normal(0, 0.25, 10)), 5)
            return 1e-3 * block_effect * np.exp(rng.normal(0, 0.05, 50))

        b, c = series(), series()
        for blk in labelled:
            est = paired_speedup(b, c, block=blk, resamples=2000, seed=1)
            labelled[blk] += record.speed_outcome(est["lo"], est["hi"]) != "correct_tie"
    assert labelled[1] > 0.15 * runs  # the naive interval undercovers badly
    assert labelled[5] <= 0.10 * runs  # the block interval holds


def test_block_must_divide_the_pairs():
    with pytest.raises(ValueError):
        paired_speedup([1.0] * 50, [1.0] * 50, block=7)
    with pytest.raises(ValueError):
        paired_speedup([1.0] * 5, [1.0] * 5, block=5)


def test_systematic_widening():
    b, c = [2.0] * 10, [1.0] * 10
    est = paired_speedup(b, c, systematic=0.03)
    assert est["speedup"] == 2.0 and est["lo"] == pytest.approx(2.0 / 1.03)
    assert est["hi"] == pytest.approx(2.06)
    near = paired_speedup([1.02] * 10, [1.0] * 10, systematic=0.03)
    assert record.speed_outcome(near["lo"], near["hi"]) == "correct_tie"  # 2% is within it


def test_the_stop_rule_reads_the_width_the_rounds_and_the_budget():
    assert resolution(2.0, 1.9, 2.1) == pytest.approx(0.05)
    assert keep_sampling(0.04, 0.05, 1, 6, 1.0, 1.0, 30.0) == "target"
    assert keep_sampling(0.09, 0.05, 2, 6, 2.0, 1.0, 30.0) is None  # another round fits
    assert keep_sampling(0.09, 0.05, 6, 6, 6.0, 1.0, 30.0) == "rounds"
    assert keep_sampling(0.09, 0.05, 2, 6, 20.0, 11.0, 30.0) == "budget"  # the next would end past it
    # fewer than the least rounds never stop it, neither the width nor the budget
    assert keep_sampling(0.01, 0.05, 2, 6, 50.0, 30.0, 30.0, min_rounds=3) is None
    assert keep_sampling(0.01, 0.05, 3, 6, 50.0, 30.0, 30.0, min_rounds=3) == "target"
    est = paired_speedup([2.0, 2.2, 1.8, 2.0], [1.0] * 4)
    assert est["sampling_halfwidth"] == pytest.approx(resolution(est["speedup"], est["lo"], est["hi"]))
    with pytest.raises(ValueError):
        resolution(0.0, 0.9, 1.1)


def _adaptive(rng, ratio, noise=0.25, goal=0.05, max_rounds=6, drift=0.0, two_stage=True, min_rounds=3, systematic=0.0):
    """One adaptive timing: rounds of 50 paired calls (blocks of 5 sharing a disturbance; with
    ``drift``, the candidate's speed also changes from round to round, as a shared host's does
    to one program more than another) until the stop rule says stop; returns (outcome, the
    width reached, rounds)."""
    b: list[float] = []
    c: list[float] = []
    while True:
        wobble = np.exp(rng.normal(0, drift))
        for prog, scale in ((b, 1.0), (c, wobble / ratio)):
            block_effect = np.repeat(np.exp(rng.normal(0, noise, 10)), 5)
            prog.extend(1e-3 * scale * block_effect * np.exp(rng.normal(0, 0.05, 50)))
        n = len(b) // 50
        est = paired_speedup(b, c, block=5, resamples=2000, seed=1, rounds=n if two_stage else 1, systematic=systematic)
        stop = keep_sampling(est["sampling_halfwidth"], goal, n, max_rounds, 0.0, 0.0, 1.0, min_rounds)
        if stop:
            return record.speed_outcome(est["lo"], est["hi"]), est["sampling_halfwidth"], n


def test_adaptive_sampling_keeps_ties_and_tells_a_real_difference():
    """Stopping on the interval's width, never on where it lies, does not raise the false-label
    rate of identical programs above the nominal level, and a real 2x difference is told
    apart every time; more rounds narrow the interval."""
    rng = np.random.default_rng(7)
    same = [_adaptive(rng, 1.0) for _ in range(100)]
    assert sum(o != "correct_tie" for o, _, _ in same) <= 10
    assert all(r > 1 for _, _, r in same)  # this much noise needs more than one round
    double = [_adaptive(rng, 2.0) for _ in range(100)]
    assert all(o == "correct_faster" for o, _, _ in double)
    one = [_adaptive(rng, 1.0, max_rounds=1, min_rounds=1)[1] for _ in range(30)]
    assert np.median([w for _, w, _ in same]) < 0.7 * np.median(one)


def test_rounds_that_disagree_widen_the_interval():
    """A host whose speed drifts between rounds (+-10% on one program's time, round to round)
    labels identical programs again and again when the rounds are pooled, even with the CPU
    target's 3% systematic allowance (22% of 200 in a trial); resampling rounds first keeps
    the false labels near the nominal 5% (5% of 200), and a real 2x difference is still told
    apart."""
    rng = np.random.default_rng(5)
    kw = {"noise": 0.05, "drift": 0.1, "systematic": 0.03}
    pooled = [_adaptive(rng, 1.0, two_stage=False, **kw)[0] for _ in range(120)]
    nested = [_adaptive(rng, 1.0, **kw)[0] for _ in range(120)]
    assert sum(o != "correct_tie" for o in pooled) > 14
    assert sum(o != "correct_tie" for o in nested) <= 12
    assert all(_adaptive(rng, 2.0, **kw)[0] == "correct_faster" for _ in range(30))
    rounds = paired_speedup([1.0] * 100, [1 / 1.08] * 50 + [1 / 0.9] * 50, block=5, rounds=2)
    assert rounds["round_speedups"] == pytest.approx([1.08, 0.9])
    assert rounds["lo"] <= 0.9 and rounds["hi"] >= 1.08  # it spans both rounds
    with pytest.raises(ValueError):
        paired_speedup([1.0] * 50, [1.0] * 50, block=5, rounds=3)  # 10 blocks in 3 rounds


def test_records_are_json_safe():
    rec = record.json_safe({"a": float("inf"), "b": [1.0, float("nan")], "c": {"d": -float("inf")}, "e": "x", "f": 2})
    assert rec == {"a": None, "b": [1.0, None], "c": {"d": None}, "e": "x", "f": 2}
    json.dumps(rec, allow_nan=False)
