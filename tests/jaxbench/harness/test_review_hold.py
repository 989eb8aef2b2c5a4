"""Review on the interval, not a single number (issue 31, item 4; TRUST.md 6): the pure rule
``jaxbench.verdict.review.hold_reasons`` and the speed verdict that applies it
(``jaxbench.harness.speed.speed_verdict``), on hand-made values (no sandbox, no JAX)."""

from __future__ import annotations

import pytest

from jaxbench.harness.settings import InfrastructureError
from jaxbench.harness.speed import speed_verdict
from jaxbench.record import REVIEW_SPEEDUP, new_record
from jaxbench.verdict import configurations as cfgs
from jaxbench.verdict import pallas_share
from jaxbench.verdict import review as review_rules
from jaxbench.verdict.review import hold_reasons, share_review_bar


def share(outside, *, threshold=pallas_share.THRESHOLD, ok=True, unconditional=1, conditional=0):
    """``assess_artifact``'s dict as far as the rule reads it."""
    return {
        "outside_share": outside,
        "threshold": threshold,
        "ok": ok,
        "category": "",
        "kernels_unconditional": unconditional,
        "kernels_conditional": conditional,
    }


HONEST = share(0.0019)  # the largest honest share outside 3p (expert 2p/6p, small profile)


# ------------------------------------------------------------------ the speedup's interval


def test_median_under_the_bar_but_upper_bound_above_is_held():
    reasons = hold_reasons("correct_faster", 9.5, [9.0, 10.3], HONEST)
    assert len(reasons) == 1
    assert "upper bound" in reasons[0] and "10x" in reasons[0] and "median" in reasons[0]
    assert "9.50x [9.00, 10.30]" in reasons[0] and "held for review" in reasons[0]


def test_both_under_the_bar_is_not_held():
    assert hold_reasons("correct_faster", 9.5, [9.0, 9.9], HONEST) == []
    assert hold_reasons("correct_faster", 1.5, [1.3, 1.7], HONEST) == []
    assert hold_reasons("correct_faster", 9.5, [9.0, REVIEW_SPEEDUP], HONEST) == []  # at the bar: not above


def test_median_above_the_bar_is_held_with_its_figures():
    (reason,) = hold_reasons("correct_faster", 12.0, [11.0, 13.0], HONEST)
    assert reason.startswith("speedup above 10x") and "12.00x [11.00, 13.00]" in reason


def test_an_upper_bound_that_is_not_a_number_counts_as_above():
    assert hold_reasons("correct_faster", 2.0, [1.5, float("inf")], HONEST)
    assert hold_reasons("correct_faster", 2.0, [1.5, float("nan")], HONEST)


def test_without_an_interval_the_median_decides():
    assert hold_reasons("correct_faster", 12.0, None, HONEST)
    assert hold_reasons("correct_faster", 9.5, None, HONEST) == []
    assert hold_reasons("correct_faster", 9.5, ["9", "11"], HONEST) == []  # malformed: no interval


def test_a_slower_or_tied_result_is_judged_the_same_way():
    assert hold_reasons("correct_tie", 9.9, [9.6, 10.2], HONEST)
    assert hold_reasons("correct_slower", 0.5, [0.4, 0.6], share(0.09)) != []


# ------------------------------------------------------------------ the Pallas share


def test_the_review_bar_of_a_share():
    assert share_review_bar(0.10) == pytest.approx(0.08)  # 80% of the default threshold
    assert share_review_bar(0.75) == pytest.approx(0.73)  # 3p's allowance: 2 points below it
    assert share_review_bar(0.01) == pytest.approx(0.008)


def test_a_share_near_the_threshold_is_held():
    (reason,) = hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.09))
    assert "9.0%" in reason and "10.0%" in reason and "8.0%" in reason and "held for review" in reason
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.10))  # exactly at the threshold passes it
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.74, threshold=0.75))


def test_an_honest_share_is_not_held():
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.0)) == []
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.079)) == []
    # 3p's honest kernels leave 69-71% of the work to XLA by design (OUTSIDE_ALLOWANCE)
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.713, threshold=0.75)) == []


def test_a_kernel_only_in_a_conditional_branch_is_held():
    (reason,) = hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.0, conditional=2))
    assert "2 Pallas kernel call(s)" in reason and "conditional" in reason and "held for review" in reason


def test_the_share_holds_only_where_the_rule_applies_and_passed():
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.09), require_pallas=False) == []
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.09, conditional=1), require_pallas=False) == []
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(0.09, ok=False)) == []  # rejected, not held
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], share(None)) == []  # not measured
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], None) == []


def test_every_reason_is_given_and_found_in_the_notes():
    got = hold_reasons("correct_faster", 9.8, [9.5, 10.1], share(0.095, conditional=1))
    assert len(got) == 3
    assert review_rules.reasons({"notes": ["numerics not pre-checked", *got]}) == got


# ------------------------------------------------------------------ failures are never held


@pytest.mark.parametrize("outcome", ["incorrect", "rejected", "compile_error", "runtime_error", "timeout", ""])
def test_a_failed_outcome_is_never_held(outcome):
    assert hold_reasons(outcome, 50.0, [40.0, 60.0], share(0.09, conditional=3)) == []


# ------------------------------------------------------------------ the speed verdict applies it


def _speed(ratio, *, pallas=None, require_pallas=True, platform="cpu"):
    base = [1e-3] * 50
    cand = [1e-3 / ratio] * 50
    rec = new_record(
        platform=platform,
        require_pallas=require_pallas,
        pallas_share=pallas,
        timing={"median_s": cand[0], "samples": cand},
        baseline_timing={"median_s": base[0], "samples": base},
    )
    alone = {"median_s": base[0], "timing": {"samples": base}}

    def remeasure():  # pragma: no cover - the guard trusts an identical baseline
        raise AssertionError("the guard should not trip")

    speed_verdict(rec, None, alone, remeasure)
    return rec


def _guarded(beside_ms, alone_ms, again_ms):
    """A correct candidate whose baseline ran at ``beside_ms`` beside it, against a cached clean
    ``alone_ms`` and a re-measurement ``again_ms``; returns (record, re-measurements made)."""
    cand = [5e-3] * 50
    base = [beside_ms * 1e-3] * 50
    rec = new_record(
        platform="cpu",
        require_pallas=True,
        pallas_share=HONEST,
        timing={"median_s": cand[0], "samples": cand},
        baseline_timing={"median_s": base[0], "samples": base},
    )
    calls = []

    def remeasure():
        calls.append(again_ms)
        return {"median_s": again_ms * 1e-3, "timing": {"samples": [again_ms * 1e-3] * 50}}

    speed_verdict(rec, None, {"median_s": alone_ms * 1e-3, "timing": {"samples": [alone_ms * 1e-3] * 50}}, remeasure)
    return rec, calls


def test_a_baseline_slowed_by_load_is_timed_again_never_held():
    # the load rose since the cached clean timing, and the re-measurement sees it too: it stands
    rec, calls = _guarded(14.0, 1.0, 12.0)
    assert calls == [12.0] and rec["baseline_source"] == "interleaved"
    assert rec["outcome"] == "correct_faster" and rec["held_for_review"] is False
    assert "measured alone again" in rec["notes"][0]
    # the load fell while re-measuring: the pairing cannot be trusted, which is the machine's
    # doing (the timer runs only the trusted side's program): an infrastructure retry, no hold
    with pytest.raises(InfrastructureError, match="not trusted.*timing again later"):
        _guarded(14.0, 1.0, 1.0)
    rec, calls = _guarded(1.1, 1.0, 1.0)  # within the guard: never re-measured
    assert calls == [] and rec["notes"] == []


def test_the_speed_verdict_holds_on_the_upper_bound():
    # cpu: the interval is widened by the 3% systematic uncertainty: 9.8x reaches 10.09x
    rec = _speed(9.8, pallas=HONEST)
    assert rec["speedup"] == pytest.approx(9.8) and rec["speedup_ci"][1] > REVIEW_SPEEDUP
    assert rec["outcome"] == "correct_faster" and rec["held_for_review"] is True
    assert any("upper bound" in n and "held for review" in n for n in rec["notes"])
    rec = _speed(9.5, pallas=HONEST)  # reaches 9.79x: under the bar
    assert rec["held_for_review"] is False and rec["notes"] == []


def test_the_speed_verdict_holds_a_share_near_the_threshold_under_the_rule_only():
    rec = _speed(1.5, pallas=share(0.09))
    assert rec["held_for_review"] is True and any("9.0% of the workload's FLOPs" in n for n in rec["notes"])
    rec = _speed(1.5, pallas=share(0.09), require_pallas=False)
    assert rec["held_for_review"] is False


def test_a_configuration_held_on_its_interval_holds_the_workload():
    rec = _speed(9.8, pallas=HONEST)
    other = _speed(1.5, pallas=HONEST)
    out = cfgs.combine("small", [("a", "small/a", rec), ("b", "small/b", other)])
    assert out["held_for_review"] is True  # the geomean's upper bound is under the bar
    assert out["speedup_ci"][1] < REVIEW_SPEEDUP
    assert review_rules.state_from_record(out, out["outcome"]) == review_rules.HELD
    assert [r.split(": ")[0] for r in review_rules.reasons(out)] == ["a"]  # named by configuration
    assert "upper bound" in review_rules.reasons(out)[0]


# ------------------------------------------------------------------ a rejection's category


def test_a_rejected_record_and_its_configurations_carry_reward_hack():
    held = _speed(12.0, pallas=HONEST)
    out = cfgs.combine("small", [("a", "small/a", _speed(1.5, pallas=HONEST)), ("b", "small/b", held)])
    rec = review_rules.rejected_record(out, {"by": "staff", "at": "now", "note": "caches"})
    assert rec["outcome"] == "rejected" and rec["error_category"] == review_rules.REJECTED_CATEGORY == "reward_hack"
    for c in rec["configurations"]:
        assert c["outcome"] == "rejected" and c["error_category"] == "reward_hack"
        assert c["speedup"] is None and c["speedup_ci"] is None and c["median_s"] is None
    kept = rec["review"]["original"]
    assert kept["outcome"] == "correct_faster" and kept["speedup"] == out["speedup"]
    assert [c["outcome"] for c in kept["configurations"]] == ["correct_faster", "correct_faster"]
    assert kept["configurations"][1]["speedup"] == pytest.approx(12.0)
    # a one-configuration record has none to rewrite
    single = review_rules.rejected_record(held, {"note": ""})
    assert single["error_category"] == "reward_hack" and "configurations" not in single["review"]["original"]
