"""The example Pallas GPU (Triton) candidates: each matches its workload's XLA baseline under
Pallas interpret mode at the small profile (three input keys) and lowers for CUDA (Triton) at
full shapes on this CPU host."""

import re

import pytest

from jaxbench import workloads
from jaxbench.kernels import examples
from tests.jaxbench.kernels._candidates import (
    check_matches_baseline,
    import_allowed,
    imported_modules,
    load_candidate,
    lower_for_gpu,
    passes_interpret,
    run_gpu_interpret,
)

IDS = sorted(examples.EXAMPLES_GPU, key=lambda w: int(w[:-1]))
SEEDS = (0, 1, 2)


def test_registry_names_gpu_files_by_slug():
    assert set(examples.EXAMPLES_GPU) == {"12p", "8p", "1p"}
    assert examples.for_platform("gpu") is examples.EXAMPLES_GPU
    assert examples.for_platform("tpu") is examples.for_platform("cpu") is examples.EXAMPLES
    for wid, name in examples.EXAMPLES_GPU.items():
        assert name == f"gpu/{workloads.get(wid).slug}.py"
        assert examples.path(wid, "gpu").is_file()
    with pytest.raises(KeyError, match="no gpu example"):
        examples.path("9p", "gpu")


@pytest.mark.parametrize("wid", IDS)
def test_gpu_source_follows_the_interface(wid):
    src = examples.source(wid, "gpu")
    assert src.startswith("# JAXBench example candidate")
    bad = sorted(m for m in imported_modules(src) if not import_allowed(m, expert=False))
    assert not bad, f"imports outside the candidate interface: {bad}"
    assert "pallas_call" in src and "plgpu.CompilerParams" in src  # a Triton kernel
    assert not re.search(r"pallas\.tpu|pltpu", src), "a GPU example uses nothing of the TPU backend"
    assert not passes_interpret(src), "the harness picks interpret mode"


@pytest.mark.parametrize("wid", IDS)
def test_gpu_example_matches_baseline_small_interpret(wid):
    wl = workloads.get(wid)
    mod = load_candidate(examples.source(wid, "gpu"), wl, "small", str(examples.path(wid, "gpu")))
    check_matches_baseline(mod, wl, "small", SEEDS, run=run_gpu_interpret)


@pytest.mark.parametrize("wid", IDS)
def test_gpu_example_lowers_for_cuda_full(wid):
    wl = workloads.get(wid)
    mod = load_candidate(examples.source(wid, "gpu"), wl, "full", str(examples.path(wid, "gpu")))
    lower_for_gpu(mod, wl, "full")


def test_a_wrong_gpu_kernel_fails_the_same_check():
    """The check can fail: the RMSNorm example without its epsilon is off at every row."""
    wl = workloads.get("12p")
    src = examples.source("12p", "gpu").replace("jax.lax.rsqrt(mean2 + eps)", "jax.lax.rsqrt(mean2 + 1.0)")
    mod = load_candidate(src, wl, "small")
    with pytest.raises(AssertionError, match="outside the allowance"):
        check_matches_baseline(mod, wl, "small", SEEDS[:1], run=run_gpu_interpret)
