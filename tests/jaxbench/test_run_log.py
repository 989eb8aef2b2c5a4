"""The run log read from a record (jaxbench/run_log.py): phases in order with their timings, the
timing summary, each child's captured output bounded and cleaned. The two records under
records/ are real: ``jaxbench evaluate --workload 12p --profile small --json`` of the 12p example
kernel (correct) and of a candidate that prints (with ANSI colours, a BEL and a ``<script>``)
and raises while it is traced (compile_error)."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from jaxbench import run_log as rl
from jaxbench.record import new_record, trim

RECORDS = pathlib.Path(__file__).parent / "records"


def record(name: str) -> dict:
    return json.loads((RECORDS / f"{name}.json").read_text())


@pytest.fixture
def correct():
    return record("correct_12p_small_cpu")


@pytest.fixture
def compile_error():
    return record("compile_error_prints_12p_small_cpu")


def names(log):
    return [p["name"] for p in log["phases"]]


def test_a_correct_record_lists_every_phase_in_order_with_its_timings(correct):
    log = rl.run_log(correct)
    assert log["kind"] == "evaluation" and log["outcome"] == correct["outcome"]
    assert names(log) == [
        "setup",
        "timer start",
        "export child start",
        "prepare",
        "device wait",
        "device open",
        "job",
        "export",
        "export child close",
        "load",
        "compile",
        "check",
        "timing",
        "verdict",
        "timer close",
    ]
    by = {p["key"]: p for p in log["phases"]}
    for key, p in by.items():
        assert p["wall_s"] == correct["phases"][key] and p["what"] and p["status"] == "done"
    # the child's own account, beside the trusted wall time
    assert by["compile_s"]["child_s"] == correct["phases"]["child_compile"]
    assert by["check_s"]["child_s"] == {"exec_s": correct["phases"]["child_exec_s"]}
    assert set(by["timing_s"]["child_s"]) == {"loop_s", "warmup_s", "stop_trace_s", "baseline_s"}
    assert log["total_s"] == correct["phases"]["total_s"]
    assert log["context"]["hardware"] == "cpu" and log["context"]["mode"] == "interpret"


def test_the_timing_summary_has_samples_median_spread_and_interval(correct):
    t = rl.run_log(correct)["timing"]
    for side, key in (("candidate", "timing"), ("baseline", "baseline_timing")):
        got, src = t[side], correct[key]
        assert got["n"] == 50 == len(src["samples"])
        assert got["median_s"] == src["median_s"] and got["spread"] == src["spread"]
        lo, hi = got["interval_s"]
        assert min(src["samples"]) <= lo <= got["median_s"] <= hi <= max(src["samples"])
        assert got["method"] == "cpu_thunk_span"
    assert t["speedup"] == correct["speedup"] and t["speedup_ci"] == correct["speedup_ci"]
    assert t["baseline_source"] == correct["baseline_source"]


def test_the_percentiles_interpolate_like_numpy():
    t = rl.timing_summary({"samples": [4.0, 1.0, 3.0, 2.0, 5.0], "median_s": 3.0})
    assert t["interval_s"] == pytest.approx([1.4, 4.6])
    assert t["n"] == 5


def test_a_compile_error_stops_at_the_export_and_shows_what_the_candidate_printed(compile_error):
    log = rl.run_log(compile_error)
    assert log["outcome"] == "compile_error" and log["error_category"] == "trace_error"
    assert log["phase_reached"] == "compile" and log["timing"] is None
    stopped = [p for p in log["phases"] if p["status"] == "stopped"]
    assert [p["name"] for p in stopped] == ["export"]
    assert "compile" not in names(log) and "timing" not in names(log)
    out = {(o["child"], o["stream"]): o for o in log["outputs"]}
    assert set(out) == {("export", "stdout"), ("export", "stderr"), ("timer", "stdout"), ("timer", "stderr")}
    # the ANSI colour codes and the BEL are gone; the text itself (a <script> included) is
    # kept as text: the page escapes it
    assert out["export", "stdout"]["text"] == "hello from candidate red <script>alert(1)</script>"
    assert out["export", "stderr"]["text"] == "err linebell"
    assert out["export", "stdout"]["bytes"] == 60 and not out["export", "stdout"]["trimmed"]
    assert out["timer", "stdout"]["text"] == "" and out["timer", "stderr"]["text"] == ""


def test_output_is_bounded_to_its_last_characters_and_says_so(correct):
    rec = copy.deepcopy(correct)
    long = "".join(f"line {i}\n" for i in range(3000))  # ~26,000 characters
    rec["export_child_output"]["stdout"] = long
    out = rl.run_log(rec)["outputs"][0]
    assert len(out["text"]) == rl.OUTPUT_CAP and long.endswith(out["text"])
    assert out["text"].endswith("line 2999\n") and out["trimmed"] is True
    small = rl.run_log(rec, output_cap=100)["outputs"][0]
    assert len(small["text"]) == 100 and small["trimmed"]


def test_what_the_record_or_the_sandbox_cut_is_flagged_trimmed(correct):
    rec = copy.deepcopy(correct)
    rec["export_child_output"]["stdout"] = trim("x" * 5000, 4000)  # record.trim keeps the start
    rec["export_child_output"]["stderr"] = "short"
    rec["export_child_output"]["bytes"]["stderr"] = {"bytes": 100_000, "truncated": True}
    rec["child_output"]["stdout"] = "head\n[... 1000 bytes dropped ...]\ntail"
    out = {(o["child"], o["stream"]): o for o in rl.run_log(rec)["outputs"]}
    assert out["export", "stdout"]["trimmed"] and not out["export", "stdout"]["text"].endswith("[trimmed]")
    assert out["export", "stderr"]["trimmed"] and out["export", "stderr"]["bytes"] == 100_000
    assert out["timer", "stdout"]["trimmed"]
    assert not out["timer", "stderr"]["trimmed"]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[1;31mred\x1b[0m plain", "red plain"),
        ("\x1b]0;window title\x07after", "after"),
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("a\x1bcb", "ab"),  # ESC c (reset the terminal)
        ("\x9b2Jcleared", "cleared"),  # the 8-bit CSI
        ("nul\x00 bs\x08 del\x7f c1\x85 end", "nul bs del c1 end"),
        ("bidi \u202eevil\u202c and \u2066iso\u2069", "bidi evil and iso"),
        ("win\r\nlines\rprogress", "win\nlines\nprogress"),
        ("tab\tand\nnewline kept", "tab\tand\nnewline kept"),
        ("unicode ✓ é 中文 kept", "unicode ✓ é 中文 kept"),
    ],
)
def test_escape_sequences_and_control_characters_are_removed(raw, clean):
    assert rl.clean_text(raw) == (clean, False)


def test_a_reused_record_says_whose_run_it_shows(correct):
    log = rl.run_log(dict(correct, reused=True), reused_from=41)
    assert log["reused"] is True and log["reused_from"] == 41
    assert any("reused" in r and "evaluation 41" in r for r in log["remarks"])
    assert log["phases"] and log["timing"]  # the precedent's run, shown as such
    assert rl.run_log(correct, reused_from=41)["reused_from"] is None  # not reused: no precedent


def test_a_row_without_a_record_has_an_empty_log():
    for rec in (None, {}):
        log = rl.run_log(rec)
        assert log["kind"] == "none" and log["phases"] == [] and log["timing"] is None and log["outputs"] == []
        assert log["outcome"] is None and log["remarks"] == ["no run recorded yet"]


def test_a_failed_run_without_timing_stops_where_it_timed_out():
    rec = new_record(
        outcome="timeout",
        error_category="compile_timeout",
        phase="compile",
        phases={"startup_s": 0.2, "export_s": 0.3, "load_s": 0.1, "compile_s": 61.0, "compile_cpu_s": 60.4},
        child_output={"stdout": "", "stderr": "Thread 0x1 (most recent call first):\n  File ..."},
    )
    log = rl.run_log(rec)
    assert log["timing"] is None
    by = {p["key"]: p for p in log["phases"]}
    assert by["compile_s"]["status"] == "stopped" and by["compile_s"]["cpu_s"] == 60.4
    assert [p["status"] for p in log["phases"]].count("stopped") == 1
    assert by["export_s"]["cpu_s"] is None  # not read: None, not 0
    assert [o["stream"] for o in log["outputs"]] == ["stdout", "stderr"]  # the timer's only


def test_a_held_result_withholds_its_timings(correct):
    log = rl.run_log(dict(correct, outcome="held_for_review"), speed_withheld=True)
    assert log["timing"] is None and log["speed_withheld"]
    timing = next(p for p in log["phases"] if p["key"] == "timing_s")
    assert timing["child_s"] is None  # the child's loop and baseline seconds would tell the speed
    assert not any(p["status"] == "stopped" for p in log["phases"])
    assert any("held for review" in r for r in log["remarks"])


def test_a_precheck_that_stopped_at_the_lowering():
    rec = {
        "kind": "lowering",
        "ok": False,
        "outcome": "compile_error",
        "error_category": "mosaic_error",
        "platform": "tpu",
        "profile": "full",
        "lower_s": 1.25,
        "duration_s": 1.5,
        "precheck": "lowering",
    }
    log = rl.run_log(rec)
    assert log["kind"] == "lowering" and log["total_s"] == 1.5
    assert [(p["name"], p["wall_s"], p["status"]) for p in log["phases"]] == [("lowering", 1.25, "stopped")]
    assert "tpu at full shapes" in log["phases"][0]["what"]


def test_a_precheck_numerics_record_starts_with_its_lowering(correct):
    rec = dict(correct, precheck="numerics", lowering={"platform": "tpu", "profile": "full", "duration_s": 0.9})
    log = rl.run_log(rec)
    assert log["phases"][0]["name"] == "pre-check lowering" and log["phases"][0]["wall_s"] == 0.9


def test_a_multi_configuration_record_names_the_configuration_that_decided(correct):
    rec = dict(
        correct,
        outcome="incorrect",
        configurations=[
            {"name": "a", "outcome": "correct_faster", "total_s": 3.0},
            {"name": "b", "outcome": "incorrect", "total_s": 2.0},
            {"name": "c", "outcome": "not_run"},
        ],
    )
    log = rl.run_log(rec)
    assert [c["name"] for c in log["configurations"]] == ["a", "b", "c"]
    assert log["configurations"][2]["total_s"] is None
    assert any("configuration b" in r for r in log["remarks"])


def test_phases_a_newer_harness_records_are_kept(correct):
    rec = copy.deepcopy(correct)
    rec["phases"]["warm_s"] = 0.5
    log = rl.run_log(rec)
    assert log["phases"][-1]["key"] == "warm_s" and log["phases"][-1]["name"] == "warm"


@pytest.mark.parametrize(
    "junk",
    [
        {"phases": "x", "child_output": ["a"], "timing": 3, "outcome": 5},
        {"phases": {"compile_s": "slow", "child_compile": {"x": "y"}, "total_s": float("nan")}},
        {"child_output": {"stdout": None, "stderr": 12, "bytes": {"stdout": {"bytes": True}}}},
        {"timing": {"samples": ["a", None, 1.0], "n": "50"}, "speedup_ci": [1, 2, 3]},
    ],
)
def test_a_malformed_record_gives_a_log_not_an_exception(junk):
    log = rl.run_log(junk)
    json.dumps(log)  # JSON-serialisable whatever came in
    assert log["kind"] == "evaluation"
