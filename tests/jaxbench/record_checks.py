"""What every evaluation record of the 12p small cpu candidates must hold, whatever its verdict:
complete, JSON-serialisable, in the documented vocabulary, and, for a correct one, timings that
add up. Checked on every record of the red-team corpus as the worker stores it
(tests/jaxbench/adversarial/test_corpus_pipeline.py)."""

import json
from collections.abc import Mapping
from typing import Any

from jaxbench.record import CATEGORIES, OUTCOMES, new_record, speed_outcome

# what the worker adds to the harness's record (evaluator.runner): the workload's version and
# content hash it was measured under, and the fresh children a death outside the harness cost
WORKER_KEYS = {"workload_version", "workload_content_hash", "infrastructure_attempts"}


def check_record(rec: Mapping[str, Any], label: str) -> None:
    keys = set(rec)
    assert set(new_record()) <= keys and keys - set(new_record()) <= WORKER_KEYS, (
        label,
        sorted(keys ^ set(new_record())),
    )
    json.dumps(rec)
    assert rec["outcome"] in OUTCOMES, label
    if rec["error_category"] is not None:
        assert rec["error_category"] in CATEGORIES[rec["outcome"]], (label, rec["error_category"])
    if "infrastructure_attempts" in rec:
        # the worker's own verdict on a child that died of the same outside signal twice
        # (evaluator.runner.died_again_record): every attempt kept, with the last attempt's
        # facts as the harness recorded them up to the death (below)
        assert rec["outcome"] == "runtime_error" and rec["error_category"] == "crash", label
        assert len(rec["infrastructure_attempts"]) >= 2, label
        assert rec["speedup"] is None and rec["speedup_ci"] is None, label
    assert rec["sandbox"]["clearenv"] is True, label
    assert rec["seeds"]["check"] and all(len(s) == 16 for s in rec["seeds"]["check"]), label
    assert rec["harness_version"] and rec["jax_version"] == "0.10.2", label
    if rec["outcome"].startswith("correct_"):
        t = rec["timing"]
        n = 50 * rec["resolution"]["rounds"]  # adaptive sampling: whole rounds of 50 pairs
        assert t["n"] == n and t["method"] == "cpu_thunk_span", label
        assert 0 < t["min_s"] <= t["median_s"] <= t["max_s"], label
        assert t["median_s"] * n < t["phase_wall_s"], label
        assert rec["mode"] == "interpret" and rec["has_pallas_call"] is True, label
        b = rec["baseline_timing"]
        assert b["n"] == n and b["method"] == "cpu_thunk_span" and b["program"] != t["program"], label
        # a guard the load trips twice times the case again (load_retries), never holds it
        assert rec["baseline_source"] == "interleaved", label
        assert rec["baseline_median_s"] == b["median_s"], label
        lo, hi = rec["speedup_ci"]
        assert lo <= rec["speedup"] <= hi, label
        assert rec["outcome"] == speed_outcome(lo, hi), label
        e = rec["errors"]
        assert e["n_fail"] == 0 and rec["max_abs_err"] == e["candidate"]["max_abs"], label
        assert e["xla"]["max_abs"] > 0, label  # the bf16 baseline is never exact
    else:
        assert rec["speedup"] is None and rec["speedup_ci"] is None, label
    if rec["outcome"] == "compile_error":
        assert rec["message"] and len(rec["message"]) <= 2000, label
