"""The public API around evaluate(): baselines, the TPU lowering pre-check, the CLI."""

import json
import os
import subprocess
import sys

import pytest

from jaxbench import HARNESS_VERSION, harness

from .conftest import CANDIDATES, source

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_baseline_record(baseline_12p):
    b = baseline_12p
    assert b["kind"] == "baseline" and b["workload"] == "12p" and b["profile"] == "small"
    assert b["hardware"] == "cpu" and b["harness_version"] == HARNESS_VERSION
    t = b["timing"]
    assert t["n"] == 50 and t["method"] == "cpu_thunk_span" and b["median_s"] == t["median_s"] > 0
    # the baseline child reproduces the trusted XLA output: as far from the exact answer as it
    e = b["errors"]
    assert e["n_fail"] == 0 and b["max_abs_err"] == e["xla"]["max_abs"] == e["candidate"]["max_abs"]
    json.dumps(b)


def test_baseline_must_match(evaluate, baseline_12p):
    with pytest.raises(ValueError, match="profile"):
        harness.evaluate("12p", source("correct_rmsnorm.py"), profile="full", hardware="cpu", baseline=baseline_12p)
    with pytest.raises(ValueError, match="harness_version"):
        harness.evaluate(
            "12p",
            source("correct_rmsnorm.py"),
            profile="small",
            hardware="cpu",
            baseline=dict(baseline_12p, harness_version="0.0.0"),
        )


def test_lower_for_tpu_precheck():
    ok = harness.lower_for_platform("12p", source("correct_rmsnorm.py"), platform="tpu", profile="full")
    assert ok["ok"] is True and ok["has_pallas_call"] is True, ok["message"]
    bad = harness.lower_for_platform(
        "12p", (CANDIDATES / "lowering" / "bad_tpu_tiling.py").read_text(), platform="tpu", profile="full"
    )
    assert bad["ok"] is False and bad["outcome"] == "compile_error"
    assert "divisible by 8 and 128" in bad["message"]
    assert bad["sandbox"]["clearenv"] is True
    json.dumps(bad)


def test_precheck_lowers_an_output_of_another_dtype_and_says_what_the_evaluation_will_judge():
    # as the public 3p and 11p files do: the right shape in float32 where the answer is bfloat16
    src = source("correct_rmsnorm.py") + (
        "\n_honest = workload\n\n\ndef workload(x, scale):\n    return _honest(x, scale).astype(jnp.float32)\n"
    )
    low = harness.lower_for_platform("12p", src, platform="tpu", profile="full", require_pallas=True)
    assert low["ok"] is True, low["message"]
    (note,) = low["warnings"]
    assert note.startswith("output 0 is float32[") and "dtype_mismatch" in note and note in low["message"]
    # a shape of its own is still no lowering of this workload
    wrong = source("correct_rmsnorm.py") + (
        "\n_honest = workload\n\n\ndef workload(x, scale):\n    return _honest(x, scale)[..., :8]\n"
    )
    low = harness.lower_for_platform("12p", wrong, platform="tpu", profile="full")
    assert (low["ok"], low["error_category"]) == (False, "signature_mismatch")


def test_lower_for_tpu_precheck_times_out_where_the_candidate_is_stuck():
    low = harness.lower_for_platform(
        "12p", source("timeout_trace_loop.py"), platform="tpu", profile="full", timeouts={"export": 8}
    )
    assert low["ok"] is False and (low["outcome"], low["error_category"]) == ("compile_error", "compile_timeout")
    assert low["message"].startswith("lowering exceeded 8 s of CPU time") and "stuck at" in low["message"]
    json.dumps(low)


def _cli(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def test_cli_usage_errors():
    r = _cli("evaluate", "--workload", "99z", "--kernel", str(CANDIDATES / "syntax_error.py"))
    assert r.returncode == 2 and "unknown workload" in r.stderr
    r = _cli("evaluate", "--workload", "12p", "--kernel", "/nonexistent/k.py")
    assert r.returncode == 2 and "not found" in r.stderr
    r = _cli("evaluate", "--workload", "12p")
    assert r.returncode == 2


def test_cli_list():
    r = _cli("list", "--json")
    assert r.returncode == 0, r.stderr
    rows = {row["id"]: row for row in json.loads(r.stdout)}
    assert rows["12p"]["slug"] == "12p-rmsnorm" and rows["12p"]["small"] == "2x256x512 512"


def test_cli_evaluate_failed_candidate_exit_1():
    r = _cli("evaluate", "--workload", "12p-rmsnorm", "--kernel", str(CANDIDATES / "syntax_error.py"), "--json")
    assert r.returncode == 1, r.stderr
    rec = json.loads(r.stdout)
    assert rec["outcome"] == "compile_error" and rec["error_category"] == "syntax_error"


def test_cli_lower_exit_codes():
    r = _cli(
        "lower",
        "--workload",
        "12p",
        "--kernel",
        str(CANDIDATES / "lowering" / "bad_tpu_tiling.py"),
        "--platform",
        "tpu",
    )
    assert r.returncode == 1 and "8 and 128" in r.stdout
