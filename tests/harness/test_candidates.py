"""The red-team corpus: every candidate file under candidates/ goes through the real harness
(sandboxed child, trusted verdict) and must get the verdict its ``# expect:`` header names."""
import json

import pytest

from evaluator.bench.record import CATEGORIES, OUTCOMES, new_record

from .conftest import CANDIDATES, expectations

# the isolation probes have their own, stricter tests in test_isolation.py
FILES = sorted(p.name for p in CANDIDATES.glob("*.py") if not p.name.startswith("probe_"))


@pytest.mark.parametrize("name", FILES)
def test_candidate_verdict(name, evaluate):
    rec = evaluate(name)
    expected = expectations(CANDIDATES / name)
    got = (rec["outcome"], rec["error_category"])
    assert any(got[0] == o and (c is None or got[1] == c) for o, c in expected), \
        f"{name}: got {got}, expected {expected}; message: {rec['message']}"
    # every record is complete, JSON-serialisable and uses the documented vocabulary
    assert set(rec) == set(new_record())
    json.dumps(rec)
    assert rec["outcome"] in OUTCOMES
    if rec["error_category"] is not None:
        assert rec["error_category"] in CATEGORIES[rec["outcome"]]
    assert rec["sandbox"]["clearenv"] is True
    assert rec["seeds"]["check"] and all(len(s) == 16 for s in rec["seeds"]["check"])
    assert rec["harness_version"] and rec["jax_version"] == "0.10.2"
    if rec["outcome"].startswith("correct_"):
        t = rec["timing"]
        assert t["n"] == 50 and t["method"] == "cpu_thunk_span"
        assert 0 < t["min_s"] <= t["median_s"] <= t["max_s"]
        assert t["median_s"] * 50 < t["phase_wall_s"]
        assert rec["mode"] == "interpret" and rec["has_pallas_call"] is True
        assert rec["speedup"] == pytest.approx(rec["baseline_median_s"] / t["median_s"])
        assert rec["max_abs_err"] <= 1e-2
    else:
        assert rec["speedup"] is None
    if rec["outcome"] == "compile_error":
        assert rec["message"] and len(rec["message"]) <= 2000


def test_compile_error_message_is_useful(evaluate):
    rec = evaluate("compile_error_blockspec.py")
    assert "same number of dimensions" in rec["message"]
    assert "candidate.py:" in rec["message"]          # the candidate's own line


def test_runtime_error_message_names_the_cause(evaluate):
    rec = evaluate("runtime_error_oob.py")
    assert "Out-of-bounds" in rec["message"]
    assert "Traceback" not in rec["message"]


def test_correct_faster_and_review_against_a_slow_baseline(evaluate, baseline_12p):
    """The outcome follows the baseline record: the same correct kernel against a baseline
    that took 1 s per call is faster, and a >10x speedup is held for review."""
    slow = dict(baseline_12p, median_s=1.0)
    rec = evaluate("correct_rmsnorm.py", baseline=slow)
    assert rec["outcome"] == "correct_faster", (rec["outcome"], rec["error_category"], rec["message"], rec["phases"])
    assert rec["speedup"] > 10 and rec["held_for_review"] is True
    assert rec["baseline_median_s"] == 1.0


def test_require_pallas_off_accepts_plain_jax(evaluate):
    rec = evaluate("no_pallas_plain_jax.py", require_pallas=False)
    assert rec["outcome"] in ("correct_slower", "correct_faster")
    assert rec["has_pallas_call"] is False
