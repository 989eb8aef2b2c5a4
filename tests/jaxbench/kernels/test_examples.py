"""The example Pallas TPU candidates: each matches its workload's XLA baseline under TPU
interpret mode at the small profile (three input keys) and lowers for TPU at full shapes."""

import pytest

from jaxbench import workloads
from jaxbench.kernels import examples
from tests.jaxbench.kernels._candidates import (
    check_matches_baseline,
    import_allowed,
    imported_modules,
    load_candidate,
    lower_for_tpu,
    passes_interpret,
)

IDS = sorted(examples.EXAMPLES, key=lambda w: (w[-1], int(w[:-1])))
SEEDS = (0, 1, 2)
# 9p runs two kernels and three small GEMMs per key: the slowest example under interpret mode.
SLOW = {"9p"}


def _params(ids):
    return [pytest.param(w, marks=pytest.mark.slow) if w in SLOW else w for w in ids]


def test_registry_names_files_by_slug():
    assert len(examples.EXAMPLES) >= 6
    # the brief's set: RMSNorm, SwiGLU, GEMM, one attention workload, two KernelBench fusions
    assert {"12p", "9p", "8p", "1p"} <= set(examples.EXAMPLES)
    assert sum(w.endswith("k") for w in examples.EXAMPLES) >= 2
    for wid, name in examples.EXAMPLES.items():
        wl = workloads.get(wid)
        assert name == f"{wl.slug}.py"
        assert examples.path(wid).is_file()


@pytest.mark.parametrize("wid", IDS)
def test_source_follows_the_interface(wid):
    src = examples.source(wid)
    assert src.startswith("# JAXBench example candidate"), "a header comment that teaches"
    bad = sorted(m for m in imported_modules(src) if not import_allowed(m, expert=False))
    assert not bad, f"imports outside the candidate interface: {bad}"
    assert "pallas_call" in src
    assert not passes_interpret(src), "written for TPU: the harness picks interpret mode"
    compile(src, examples.EXAMPLES[wid], "exec")


@pytest.mark.parametrize("wid", _params(IDS))
def test_matches_baseline_small_interpret(wid):
    wl = workloads.get(wid)
    mod = load_candidate(examples.source(wid), wl, "small", str(examples.path(wid)))
    check_matches_baseline(mod, wl, "small", SEEDS)


@pytest.mark.parametrize("wid", IDS)
def test_lowers_for_tpu_full(wid):
    wl = workloads.get(wid)
    mod = load_candidate(examples.source(wid), wl, "full", str(examples.path(wid)))
    lower_for_tpu(mod, wl, "full")
