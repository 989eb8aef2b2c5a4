"""A Python that lacks a package the harness needs beside JAX (flatbuffers: jax.export imports it
when it first serializes a program, and a TPU VM image's preinstalled JAX came without it) is
refused with why, before any child starts, instead of failing every evaluation inside its export
with an ImportError. The worker refuses to boot on such a Python (tests/evaluator/
test_worker_boot.py)."""

import pytest

from jaxbench import harness
from jaxbench.harness import api, prepare


@pytest.fixture
def lacking(monkeypatch):
    monkeypatch.setattr(prepare, "EXPORT_PACKAGES", ("flatbuffers", "jaxbench_no_such_package"))
    monkeypatch.setattr(api, "new_timer_child", lambda *a, **kw: pytest.fail("a child was started"))


def test_this_python_has_what_the_harness_needs():
    assert prepare.missing_packages() == [] and prepare.packages_problem() is None


def test_an_evaluation_and_a_baseline_are_refused_with_why(lacking):
    why = "cannot import jaxbench_no_such_package, which jax.export needs to serialize programs"
    with pytest.raises(harness.InfrastructureError, match=why):
        api.evaluate_case(
            "12p",
            "def workload(x, scale):\n    return x\n",
            profile="small",
            hardware="cpu",
            require_pallas=True,
            baseline=None,
            timeouts=None,
        )
    with pytest.raises(harness.InfrastructureError, match=why):
        harness.measure_baseline("12p", profile="small", hardware="cpu")
    assert prepare.missing_packages() == ["jaxbench_no_such_package"]
