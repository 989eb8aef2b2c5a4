"""The harness's correctness rule (jaxbench/verdict/numerics.py)."""

import ml_dtypes
import numpy as np
import pytest

from jaxbench.verdict.numerics import allclose_report

TOL = dict(atol=1e-2, rtol=1e-2)


def test_identical_arrays_pass():
    x = np.linspace(-5, 5, 101, dtype=np.float32)
    rep = allclose_report(x, x.copy(), **TOL)
    assert rep == {"passed": True, "max_abs": 0.0, "max_rel": 0.0, "n_bad": 0, "n_nonfinite": 0}


def test_rule_is_atol_plus_rtol_times_reference():
    ref = np.array([0.0, 1.0, 100.0], np.float32)
    # Bounds: 0.01, 0.02, 1.01 (relative to |ref|, not to |cand|).
    inside = ref + np.array([0.0099, 0.0199, 1.0], np.float32)
    outside = ref + np.array([0.0101, 0.0201, 1.02], np.float32)
    assert allclose_report(ref, inside, **TOL)["passed"]
    rep = allclose_report(ref, outside, **TOL)
    assert not rep["passed"] and rep["n_bad"] == 3
    # The relative term uses |ref|: at ref = 1 the bound is 0.02.
    rep = allclose_report(np.float32(1.0), np.float32(1.015), **TOL)
    assert rep["passed"]
    rep = allclose_report(np.float32(1.0), np.float32(1.021), **TOL)
    assert not rep["passed"]


def test_report_fields():
    ref = np.array([1.0, 2.0, 0.0, 4.0], np.float32)
    cand = np.array([1.0, 2.5, 0.5, 4.0], np.float32)
    rep = allclose_report(ref, cand, **TOL)
    assert rep["passed"] is False
    assert rep["n_bad"] == 2
    assert rep["n_nonfinite"] == 0
    assert rep["max_abs"] == pytest.approx(0.5)
    assert rep["max_rel"] == pytest.approx(0.25)  # 0.5 / 2; ref == 0 is left out


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_never_passes(bad):
    ref = np.ones(8, np.float32)
    cand = ref.copy()
    cand[3] = bad
    rep = allclose_report(ref, cand, **TOL)
    assert not rep["passed"] and rep["n_bad"] == 1 and rep["n_nonfinite"] == 1
    assert rep["max_abs"] == 0.0  # over the finite elements only
    # Inf == Inf and NaN vs NaN do not pass either.
    rep = allclose_report(cand, cand.copy(), **TOL)
    assert not rep["passed"] and rep["n_nonfinite"] == 1


def test_huge_tolerance_does_not_accept_nan():
    rep = allclose_report(np.zeros(3, np.float32), np.full(3, np.nan, np.float32), atol=1e30, rtol=1e30)
    assert not rep["passed"] and rep["n_bad"] == 3


def test_compared_in_float32_from_bf16_and_ints():
    ref = np.array([1.0, 2.0, 3.0], ml_dtypes.bfloat16)
    assert allclose_report(ref, np.array([1.0, 2.0, 3.0], np.float32), **TOL)["passed"]
    assert allclose_report(np.arange(4, dtype=np.int32), np.arange(4), **TOL)["passed"]
    assert not allclose_report(np.arange(4, dtype=np.int32), np.arange(1, 5), **TOL)["passed"]


def test_scalars_and_empty():
    assert allclose_report(np.float32(12.5), 12.6, **TOL)["passed"]
    assert not allclose_report(np.float32(12.5), 12.7, **TOL)["passed"]
    rep = allclose_report(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), **TOL)
    assert rep["passed"] and rep["n_bad"] == 0


def test_no_broadcasting():
    with pytest.raises(ValueError, match="shape"):
        allclose_report(np.zeros((4, 1), np.float32), np.zeros((4,), np.float32), **TOL)
    with pytest.raises(ValueError, match="shape"):
        allclose_report(np.zeros((4, 4), np.float32), np.float32(0), **TOL)


def test_overflowing_difference_fails_cleanly():
    big = np.float32(3e38)
    rep = allclose_report(np.array([big]), np.array([-big]), **TOL)
    assert not rep["passed"] and rep["n_bad"] == 1


def test_negative_tolerance_rejected():
    with pytest.raises(ValueError):
        allclose_report(np.zeros(2), np.zeros(2), atol=-1.0, rtol=0.0)
