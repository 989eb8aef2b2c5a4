"""Harness behaviours shown on the red-team candidates under candidates/, through the warm pool.
Each candidate's own verdict (its ``# expect:`` header) and the completeness of its record are
checked where the whole corpus goes through the real pipeline, worker included
(tests/jaxbench/adversarial/test_corpus_pipeline.py): running them here too doubled that work."""

from jaxbench.record import CORRECT_OUTCOMES


def test_compile_error_message_is_useful(evaluate):
    rec = evaluate("compile_error_blockspec.py")
    assert "same number of dimensions" in rec["message"]
    assert "candidate.py:" in rec["message"]  # the candidate's own line


def test_an_out_of_bounds_block_is_a_wrong_answer_that_says_so(evaluate):
    """The generic Pallas interpreter clamps an out-of-bounds block index as XLA's dynamic
    slices do (TPU interpret mode raised): the wrong rows are reported, without a traceback."""
    rec = evaluate("runtime_error_oob.py")
    assert (rec["outcome"], rec["error_category"]) == ("incorrect", "not_allclose"), rec["message"]
    assert "farther from the exact answer" in rec["message"]
    assert "Traceback" not in rec["message"]


def test_a_stale_cached_baseline_does_not_decide(evaluate, baseline_12p):
    """The verdict comes from the side-by-side timings, not from the cached baseline record:
    a cached baseline that claims 1 s per call (stale, or measured on a loaded machine) is only
    the guard's reference; one that claims a nanosecond trips the guard, the baseline is
    measured alone again at once, and the pairing stands."""

    def stale(claim):
        return dict(baseline_12p, median_s=claim, timing=dict(baseline_12p["timing"], samples=[claim] * 50))

    rec = evaluate("slow_rmsnorm.py", baseline=stale(1.0))
    assert rec["outcome"] == "correct_slower", (rec["outcome"], rec["message"])
    assert rec["baseline_source"] == "interleaved" and rec["cached_baseline_median_s"] == 1.0
    assert rec["speedup"] < 1 and rec["held_for_review"] is False
    rec = evaluate("slow_rmsnorm.py", baseline=stale(1e-9))
    assert rec["outcome"] == "correct_slower", (rec["outcome"], rec["message"])
    assert any("measured alone again" in n for n in rec["notes"])
    # the side-by-side pairing decides, never the nanosecond claim, and nothing is held for it
    assert rec["speedup"] > 1e-3 and rec["baseline_source"] == "interleaved"
    assert rec["held_for_review"] is False


def test_require_pallas_off_accepts_plain_jax(evaluate):
    rec = evaluate("no_pallas_plain_jax.py", require_pallas=False)
    assert rec["outcome"] in CORRECT_OUTCOMES
    assert rec["has_pallas_call"] is False


def test_identical_code_is_a_tie_and_real_differences_are_not(evaluate):
    """The XLA reference submitted as a candidate is the baseline's own program: a tie. The same
    computation done twice (each pass depending on the last) is slower."""
    from catalog.starter import starter_source
    from jaxbench import workloads

    src = starter_source(workloads.get("12p"), "small")
    # a 95% interval: one of three may exclude 1 by chance on a loaded machine, not more
    same = [evaluate(src, require_pallas=False) for _ in range(3)]
    assert sum(r["outcome"] != "correct_tie" for r in same) <= 1, [r["message"] for r in same]
    # the point of a 0.2 ms program on this shared VM wanders (benchmarks/self_speedup.py: 0.83-1.16
    # over 20 runs, and one run past 2x in CI beside the parallel tests); a systematic factor of 2
    # (baseline and candidate timed differently) would move the median of three, which is a bug
    points = sorted(r["speedup"] for r in same)
    assert 0.5 < points[1] < 2.0, [r["message"] for r in same]
    twice = src.replace(
        "    return reference(x, scale, epsilon=CONFIG['epsilon'])",
        "    y = reference(x, scale, epsilon=CONFIG['epsilon'])\n"
        "    for _ in range(3):\n"
        "        y = reference(x + y * jnp.zeros((), x.dtype), scale, "
        "epsilon=CONFIG['epsilon'])\n"
        "    return y",
    )
    assert twice != src
    rec = evaluate(twice, require_pallas=False)
    assert rec["outcome"] == "correct_slower" and rec["speedup_ci"][1] < 0.8, rec["message"]
