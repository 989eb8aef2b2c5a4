"""Level 2's Pallas baselines (DESIGN.md, "Levels"): the timed program is the level's hand-tuned
kernel, exported for the chip on a TPU and through JAX's generic Pallas interpreter on the cpu
target; the exact answer, XLA's allowance and the Pallas share's FLOPs stay the reference's; a
platform the kernel has no lowering for is refused with the workload's reason."""

import jax
import numpy as np
import pytest

from jaxbench import harness, workloads
from jaxbench.harness import prepare
from jaxbench.harness.prepare import PlatformUnsupported
from jaxbench.kernels import level2
from tests.jaxbench.harness.conftest import untrusted_retried

# level 2's baselines as candidates (jaxbench/kernels/level2): the baseline's own program
SAME_AS_BASELINE = level2.source("l2-8p")


def _module_text(data: bytes) -> str:
    return jax.export.deserialize(bytearray(data)).mlir_module()


def test_the_tpu_export_keeps_the_kernel_and_the_cpu_export_interprets_it():
    wl = workloads.get("l2-8p")
    tpu = _module_text(prepare.exported_baseline(wl, "small", "tpu", "TPU v5 lite"))
    cpu = _module_text(prepare.exported_baseline(wl, "small", "cpu"))
    assert "tpu_custom_call" in tpu and "custom_call" not in cpu
    # the reference is what the Pallas share's FLOPs are counted on: no kernel, every FLOP outside
    reference = prepare.reference_hlo_cost(wl, "small", "tpu")
    m, k, n = (wl.config("small")[d] for d in "MKN")
    assert reference["kernels"]["total"] == 0 and reference["outside_flops"] == 2 * m * k * n
    # level 1 is unchanged: its baseline is its reference
    one = workloads.get("8p")
    assert prepare.exported_baseline(one, "small", "cpu") == prepare.exported_reference(one, "small", "cpu")


def test_the_interpreted_baseline_computes_the_reference():
    wl = workloads.get("l2-11p")
    inputs = wl.create_inputs("small", 3)
    got = jax.export.deserialize(bytearray(prepare.exported_baseline(wl, "small", "cpu"))).call(*inputs)
    want = jax.jit(wl.exact("small"))(*inputs)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=wl.atol, rtol=wl.rtol)


def test_a_platform_without_the_kernel_s_lowering_is_refused_with_the_reason():
    wl = workloads.get("l2-8p")
    with pytest.raises(PlatformUnsupported, match="runs on cpu, tpu only, not gpu: the baseline is a Pallas TPU"):
        prepare.exported_baseline(wl, "small", "gpu")
    with pytest.raises(PlatformUnsupported, match="not gpu"):
        harness.evaluate(wl, SAME_AS_BASELINE, profile="small", hardware="gpu-h100")
    with pytest.raises(PlatformUnsupported, match="not gpu"):
        harness.measure_baseline(wl, profile="small", hardware="gpu-h100")
    prepare.require_platform(workloads.get("8p"), "gpu")  # level 1 runs everywhere


@pytest.mark.slow
def test_the_baseline_s_own_kernel_as_a_candidate_ties_and_the_record_names_the_baseline():
    rec = untrusted_retried(lambda: harness.evaluate("l2-8p", SAME_AS_BASELINE, profile="small", hardware="cpu"))
    assert rec["outcome"] == "correct_tie", rec["message"]
    assert rec["baseline_program"] == "pallas" and rec["mode"] == "interpret"
    assert " vs the Pallas baseline " in rec["message"] and "XLA" not in rec["message"]
    lo, hi = rec["speedup_ci"]
    assert lo <= 1.0 <= hi


@pytest.mark.parametrize("wid", sorted(level2.FILES))
def test_each_baseline_as_a_candidate_traces_to_the_baseline_s_program(wid):
    """jaxbench/kernels/level2 holds one candidate per Pallas baseline, and it is that baseline."""
    wl = workloads.get(wid)
    namespace: dict = {}
    exec(compile(level2.source(wid), f"{wid}.py", "exec"), namespace)
    for case in wl.cases("small"):  # each configuration of a multi-configuration workload
        specs = wl.input_specs(case)
        assert str(jax.make_jaxpr(namespace["workload"])(*specs)) == str(
            jax.make_jaxpr(wl.timed_baseline(case))(*specs)
        )


def test_every_pallas_baseline_has_its_candidate():
    assert set(level2.FILES) == {w.id for w in workloads.all_workloads() if w.pallas_baseline is not None}
