"""A multi-configuration workload through the real harness (sandboxed export and timer children):
each configuration checked and timed as its own case, the first failure deciding, baselines and
the TPU pre-check per configuration. The level-2 test workload (tests/level2), given as an
instance: the harness takes one as readily as a registered ID."""

import dataclasses
import math

import pytest

from jaxbench import harness
from jaxbench.record import CORRECT_OUTCOMES
from jaxbench.verdict.configurations import NOT_RUN
from tests import level2 as level2_kernels
from tests.jaxbench.harness.conftest import untrusted_retried
from tests.level2 import w51d_gated_rmsnorm

WL = w51d_gated_rmsnorm.WORKLOAD
# two configurations of the ten (one 128 wide, one 256 wide): the same path, a quarter the time
TWO = dataclasses.replace(
    WL, configurations={p: {n: v for n, v in c.items() if n in ("c01", "c05")} for p, c in WL.configurations.items()}
)


@pytest.fixture(scope="module")
def baseline_two():
    return untrusted_retried(lambda: harness.measure_baseline(TWO, profile="small", hardware="cpu"))


def test_a_baseline_of_a_multi_configuration_profile_measures_every_case(baseline_two):
    b = baseline_two
    assert b["profile"] == "small" and sorted(b["configurations"]) == ["small/c01", "small/c05"]
    medians = [r["median_s"] for r in b["configurations"].values()]
    assert b["median_s"] == pytest.approx(math.sqrt(medians[0] * medians[1]))
    assert all(r["profile"] == case for case, r in b["configurations"].items())


def test_correct_on_every_configuration_is_correct_with_the_geomean(baseline_two):
    rec = harness.evaluate(TWO, level2_kernels.kernel_ok(), profile="small", hardware="cpu", baseline=baseline_two)
    assert rec["outcome"] in CORRECT_OUTCOMES, rec["message"]
    got = rec["configurations"]
    assert [c["name"] for c in got] == ["c01", "c05"] and all(c["outcome"] in CORRECT_OUTCOMES for c in got)
    assert rec["speedup"] == pytest.approx(math.sqrt(got[0]["speedup"] * got[1]["speedup"]))
    assert rec["profile"] == "small" and rec["has_pallas_call"] is True
    # each case was timed against its own baseline, beside the candidate
    assert all(c["baseline_median_s"] > 0 and c["median_s"] > 0 for c in got)


def test_the_first_configuration_that_fails_decides_and_the_rest_are_not_run():
    three = dataclasses.replace(
        WL,
        configurations={
            p: {n: v for n, v in c.items() if n in ("c01", "c05", "c06")} for p, c in WL.configurations.items()
        },
    )
    rec = harness.evaluate(three, level2_kernels.kernel_wrong_from_c05(), profile="small", hardware="cpu")
    assert rec["outcome"] == "incorrect" and rec["error_category"] == "not_allclose"
    assert rec["message"].startswith("configuration c05 (2 of 3 run): ")
    outcomes = [c["outcome"] for c in rec["configurations"]]
    assert outcomes[1:] == ["incorrect", NOT_RUN]
    assert rec["configurations"][0]["outcome"] in CORRECT_OUTCOMES
    assert rec["speedup"] is None


def test_a_baseline_for_other_configurations_is_refused(baseline_two):
    other = dict(baseline_two, configurations={"small/c01": baseline_two["configurations"]["small/c01"]})
    with pytest.raises(ValueError, match="configurations"):
        harness.evaluate(TWO, level2_kernels.kernel_ok(), profile="small", hardware="cpu", baseline=other)


def test_the_tpu_precheck_lowers_every_configuration():
    low = harness.lower_for_platform(TWO, level2_kernels.kernel_ok(), platform="tpu", profile="full")
    assert low["ok"], low["message"]
    assert [c["profile"] for c in low["configurations"]] == ["full/c01", "full/c05"]
    assert all(c["ok"] for c in low["configurations"])
