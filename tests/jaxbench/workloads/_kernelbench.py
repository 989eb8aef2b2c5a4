"""What the two KernelBench test files (18k-34k, 35k-50k) check the same way.

Each file keeps its own PyTorch versions of the problems (``TORCH``: id -> function), its
expectations (KernelBench numbers, categories, shapes, degenerate and precision-sensitive
workloads) and the tests only it has; the checks live here, and ``PerWorkloadChecks`` runs the
ones every workload gets (a file subclasses it as ``Test...`` with its IDS, TORCH, SENSITIVE and
EXPECTED). Tolerances are
the workload's own (``wl.atol``, ``wl.rtol``: 1e-2 everywhere but the softmax workloads).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbench import workloads
from tests.jaxbench.workloads.public_suite import load_public_baseline

torch = pytest.importorskip("torch")
F = torch.nn.functional


def f32(a):
    return np.asarray(a, dtype=np.float32)


def outside(ours, ref, atol, rtol):
    """Share of elements with |ours - ref| > atol + rtol * |ref|."""
    return float(np.mean(np.abs(ours - ref) > atol + rtol * np.abs(ref)))


@functools.cache
def small(wid):
    """(workload, inputs of seed 0, compiled bf16 baseline, its output as float32)."""
    wl = workloads.get(wid)
    inputs = wl.create_inputs("small", 0)
    compiled = jax.jit(wl.baseline("small")).lower(*inputs).compile()
    return wl, inputs, compiled, f32(compiled(*inputs))


@functools.cache
def torch_out(wid, fn):
    """``fn`` (the PyTorch version of the problem) on the seed-0 inputs, in float32."""
    wl, inputs, _, _ = small(wid)
    with torch.no_grad():
        out = fn(*[torch.from_numpy(f32(a)) for a in inputs], wl.config("small"))
    return out.numpy()


def check_metadata(wid, expected, degenerate, size_keys):
    """Registry metadata against ``expected[wid]`` = (KernelBench number, public folder name,
    category, full output shape); ``degenerate``: id -> the inputs its documented degeneracy
    makes irrelevant; every profile key outside ``size_keys`` is the same in both profiles."""
    wl = workloads.get(wid)
    kb, public_name, category, _ = expected[wid]
    assert wl.source == "kernelbench-l2" and wl.model == "KernelBench L2"
    assert wl.kernelbench_id == kb
    assert wl.public_name == public_name
    assert wl.category == category
    assert wl.slug.startswith(wid + "-") and wl.slug == wl.slug.lower()
    assert workloads.get(public_name) is wl
    assert 0 < len(wl.description) < 400
    assert (wl.degenerate is not None) == (wid in degenerate)
    assert set(wl.insensitive_inputs) == set(degenerate.get(wid, ()))
    assert set(wl.insensitive_inputs) <= set(wl.input_names)
    full, small_cfg = wl.config("full"), wl.config("small")
    assert set(full) == set(small_cfg)
    for key in set(full) - size_keys:
        assert full[key] == small_cfg[key], f"{wid}: {key} differs between profiles"
    return wl


def check_matches_pytorch(wid, fn):
    """Same inputs (bf16 values, as float32) through our baseline in float32 and through the
    PyTorch version ``fn``: the translation's semantics, at the workload's tolerance."""
    wl, inputs, _, _ = small(wid)
    ours = f32(jax.jit(wl.baseline("small"))(*[a.astype(jnp.float32) for a in inputs]))
    ref = torch_out(wid, fn)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, atol=wl.atol, rtol=wl.rtol)


def check_bf16_vs_exact(wid, fn, bound):
    """The bf16 baseline against the float32 PyTorch version at the workload's tolerance: at
    most ``bound`` of the outputs outside it (0 for a workload not precision-sensitive)."""
    wl, _, _, ours = small(wid)
    ref = torch_out(wid, fn)
    assert np.isfinite(ours).all()
    frac = outside(ours, ref, wl.atol, wl.rtol)
    assert frac <= bound, f"{wid}: {frac:.2e} of outputs outside tolerance"


def check_cost_matches_xla(wid):
    """Analytic FLOPs within 0.5x-2x of XLA's count. Conventions agree: XLA counts a
    convolution as 2 * MACs over the taps that hit real input (for 28k's input-dilated
    transposed convolution, only the taps that land in the output), as cost() does; the
    elementwise tails are a few ops per element in both, and the GEMM or convolution
    dominates."""
    wl, _, compiled, _ = small(wid)
    analysis = compiled.cost_analysis()
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0]
    xla_flops = analysis.get("flops", 0.0)
    flops, nbytes = wl.cost("small")
    assert flops > 0 and nbytes > 0
    if xla_flops:
        assert 0.5 <= flops / xla_flops <= 2.0, (flops, xla_flops)


def check_full_output_shape(wid, shape):
    """At the full profile (abstract evaluation only): the output's shape, bf16, and a cost
    of TPU scale."""
    wl = workloads.get(wid)
    spec = wl.output_spec("full")
    assert spec.shape == shape
    assert spec.dtype == jnp.bfloat16
    flops, nbytes = wl.cost("full")
    assert flops > 1e9 and nbytes > 1e6


def check_input_sensitivity(wid):
    """Swap one input at a time for the seed-1 draw: the documented insensitive inputs leave
    the output within tolerance, every other input moves it; zeros and the whole seed-1
    output never pass."""
    wl, inputs, compiled, out = small(wid)
    other = wl.create_inputs("small", 1)
    assert outside(np.zeros_like(out), out, wl.atol, wl.rtol) > 0.05
    assert outside(f32(compiled(*other)), out, wl.atol, wl.rtol) > 0
    for i, name in enumerate(wl.input_names):
        swapped = list(inputs)
        swapped[i] = other[i]
        frac = outside(f32(compiled(*swapped)), out, wl.atol, wl.rtol)
        if name in wl.insensitive_inputs:
            assert frac == 0, f"{wid}: {name} documented insensitive but moves the output"
        else:
            assert frac > 0, f"{wid}: output does not depend on {name}"


def check_public_baseline(wid):
    """The public baseline.py fed our small inputs agrees with our baseline (skipped unless
    JAXBENCH_PUBLIC_SUITE points at the public JAXBench/ folder)."""
    wl = workloads.get(wid)
    public = load_public_baseline(wl)
    _, inputs, _, ours = small(wid)
    theirs = f32(jax.jit(public.workload)(*inputs))
    assert theirs.shape == ours.shape
    np.testing.assert_allclose(theirs, ours, atol=wl.atol, rtol=wl.rtol)


class PerWorkloadChecks:
    """The per-workload tests both files share, parametrized over the subclass's ``IDS``."""

    IDS: list[str] = []
    TORCH: dict = {}
    SENSITIVE: dict[str, float] = {}
    EXPECTED: dict = {}

    def pytest_generate_tests(self, metafunc):
        if "wid" in metafunc.fixturenames:
            metafunc.parametrize("wid", self.IDS)

    def test_matches_pytorch_original(self, wid):
        check_matches_pytorch(wid, self.TORCH[wid])

    def test_bf16_baseline_vs_exact(self, wid):
        check_bf16_vs_exact(wid, self.TORCH[wid], self.SENSITIVE.get(wid, 0.0))

    def test_cost_matches_xla(self, wid):
        check_cost_matches_xla(wid)

    def test_full_output_shape(self, wid):
        check_full_output_shape(wid, self.EXPECTED[wid][3])

    def test_input_sensitivity_as_documented(self, wid):
        check_input_sensitivity(wid)

    def test_public_baseline_agrees(self, wid):
        check_public_baseline(wid)
