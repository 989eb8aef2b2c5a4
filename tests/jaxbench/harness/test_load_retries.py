"""Load never decides a verdict (issue 33 item 1): a case whose measurement the machine's load
spoiled (``MeasurementUntrusted``) is timed again on fresh children, each reason kept in the
record's ``load_retries``; past the retries the error is the caller's (the worker retries the
message), never an outcome. The case function is a stand-in here: the raise sites have their
own tests (the guard in test_review_hold.py, the starved parser in test_trace_parse.py)."""

from __future__ import annotations

import pytest

from jaxbench.harness import api
from jaxbench.harness.settings import MeasurementUntrusted
from jaxbench.record import new_record


def _case_fn(failures: int, calls: list):
    def case_fn(workload, source, *, profile, baseline, **kw):
        calls.append(profile)
        if len(calls) <= failures:
            raise MeasurementUntrusted(f"spoiled {len(calls)}")
        return new_record(outcome="correct_tie", workload=workload, profile=profile)

    return case_fn


def _evaluate(case_fn):
    return api.evaluate_with(
        case_fn, "12p", "src", profile="small", baseline=None, hardware="cpu", require_pallas=True, timeouts=None
    )


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    waits = []
    monkeypatch.setattr(api, "LOAD_RETRY_WAITS_S", (2.0, 10.0))
    monkeypatch.setattr(api.time, "sleep", waits.append)
    return waits


def test_a_spoiled_measurement_is_timed_again_and_says_why(no_pauses):
    calls: list = []
    rec = _evaluate(_case_fn(2, calls))
    assert len(calls) == 3 and no_pauses == [2.0, 10.0]
    assert rec["outcome"] == "correct_tie" and rec["load_retries"] == ["spoiled 1", "spoiled 2"]
    calls.clear()
    assert _evaluate(_case_fn(0, calls))["load_retries"] == [] and len(calls) == 1


def test_past_the_retries_it_is_the_callers_infrastructure_failure(no_pauses):
    calls: list = []
    with pytest.raises(MeasurementUntrusted, match=r"spoiled 3 \(3 attempts\)"):
        _evaluate(_case_fn(3, calls))
    assert len(calls) == 3


def test_a_baseline_alone_the_load_spoiled_is_measured_again(no_pauses, monkeypatch):
    # measure_baseline retries as an evaluation does (the command line's `baseline`, the
    # worker's reference and the guard's re-measure all call it): never exit 3 for the load
    calls: list = []

    def case(wl, profile, hardware, timeouts, cpus):
        calls.append(profile)
        if len(calls) <= 2:
            raise MeasurementUntrusted(f"spoiled {len(calls)}")
        return {"kind": "baseline", "workload": wl.id, "profile": profile, "median_s": 1e-3}

    monkeypatch.setattr(api, "_baseline_case", case)
    rec = api.measure_baseline("12p", profile="small", hardware="cpu")
    assert len(calls) == 3 and no_pauses == [2.0, 10.0]
    assert rec["load_retries"] == ["spoiled 1", "spoiled 2"] and rec["median_s"] == 1e-3
    calls.clear()
    no_pauses.clear()
    monkeypatch.setattr(api, "LOAD_RETRY_WAITS_S", ())
    with pytest.raises(MeasurementUntrusted, match=r"spoiled 1 \(1 attempts\)"):
        api.measure_baseline("12p", profile="small", hardware="cpu")
