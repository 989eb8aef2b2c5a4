"""Helpers shared by the kernel tests: load a candidate file the way the harness's sandboxed
child does, check it against the workload's XLA baseline under TPU interpret mode, and lower
it for TPU at full shapes on this CPU host."""

from __future__ import annotations

import ast
import contextlib
import itertools
import types

import numpy as np

_counter = itertools.count()

# The study's hardware. Some Pallas code asks which TPU generation it targets while tracing
# (emit_pipeline's DMA tiling, integer floor division inside a kernel); on a CPU host that
# question has no answer unless an abstract TPU device is in context.
TARGET_DEVICE_KIND = "TPU v6 lite"

ALLOWED_IMPORTS = (
    "jax",
    "jax.numpy",
    "jax.experimental.pallas",
    "jax.experimental.pallas.tpu",
    "jax.experimental.pallas.gpu",
    "jax.experimental.pallas.triton",  # the GPU (Triton) backend's module in jax 0.10
    "numpy",
    "functools",
    "math",
)
EXPERT_IMPORT_PREFIXES = ("tokamax", "jax.experimental.pallas.ops.tpu")


def imported_modules(source: str) -> set[str]:
    """The modules a source file imports: ``import a.b`` gives ``a.b``; ``from a import b``
    gives ``a`` when ``a`` is a module the rules allow as such, else ``a.b`` (so that
    ``from jax.experimental import pallas`` counts as importing ``jax.experimental.pallas``)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names.add("." * node.level + (node.module or ""))
            elif import_allowed(node.module, expert=True):
                names.add(node.module)
            else:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def passes_interpret(source: str) -> bool:
    """Whether any call in the source passes an ``interpret=`` keyword (kernels are written for
    TPU; the harness chooses interpret mode on CPU)."""
    return any(
        isinstance(node, ast.Call) and any(k.arg == "interpret" for k in node.keywords)
        for node in ast.walk(ast.parse(source))
    )


def import_allowed(name: str, expert: bool) -> bool:
    if name in ALLOWED_IMPORTS:
        return True
    return expert and any(name == p or name.startswith(p + ".") for p in EXPERT_IMPORT_PREFIXES)


def load_candidate(source: str, workload, profile: str, filename: str = "<candidate>"):
    """Execute a candidate's source as a fresh module and update its ``CONFIG`` with the
    profile's parameters, as the harness's child does before calling ``workload``."""
    mod = types.ModuleType(f"_candidate_{next(_counter)}")
    mod.__file__ = filename
    exec(compile(source, filename, "exec"), mod.__dict__)
    set_profile(mod, workload, profile)
    return mod


def set_profile(mod, workload, profile: str) -> None:
    cfg = mod.__dict__.get("CONFIG")
    if isinstance(cfg, dict):
        cfg.update(workload.config(profile))
    else:
        mod.CONFIG = workload.config(profile)


@contextlib.contextmanager
def tpu_target(device_kind: str | None = TARGET_DEVICE_KIND):
    """Trace as if for one TPU chip of ``device_kind`` (an abstract device; nothing runs on
    it). ``None``: no target, the plain CPU-host context the harness uses today."""
    if device_kind is None:
        yield
        return
    import jax
    from jax.sharding import AbstractDevice, AbstractMesh

    mesh = AbstractMesh(
        (1,), ("_target",), abstract_device=AbstractDevice(device_kind=device_kind, num_cores=1, platform="tpu")
    )
    with jax.sharding.use_abstract_mesh(mesh):
        yield


def run_interpret(mod, inputs, device_kind: str | None = None):
    import jax
    from jax.experimental.pallas import tpu as pltpu

    with pltpu.force_tpu_interpret_mode(), tpu_target(device_kind):
        return jax.block_until_ready(jax.jit(mod.workload)(*inputs))


@contextlib.contextmanager
def gpu_interpret():
    """Pallas's generic interpret mode for every ``pallas_call`` traced inside (what
    ``interpret=True`` does): GPU (Triton) kernels run on a CPU host. The same configuration
    value ``force_tpu_interpret_mode`` sets, holding ``True`` instead of TPU parameters."""
    from jax._src import config  # an internal JAX API: the switch behind force_tpu_interpret_mode

    prev = config.pallas_tpu_interpret_mode_context_manager.swap_local(True)
    try:
        yield
    finally:
        config.pallas_tpu_interpret_mode_context_manager.set_local(prev)


def run_gpu_interpret(mod, inputs):
    import jax

    with gpu_interpret():
        return jax.block_until_ready(jax.jit(mod.workload)(*inputs))


def _compare(exact, xla, out, workload, what: str) -> None:
    """The harness's rule: every output leaf as close to the exact answer as XLA's own output
    is, plus the tolerance (verdict_math.exact_rule_report); shapes equal, all finite."""
    import jax

    from jaxbench.verdict.numerics import exact_rule_report

    e_leaves, x_leaves, o_leaves = jax.tree.leaves(exact), jax.tree.leaves(xla), jax.tree.leaves(out)
    assert len(x_leaves) == len(o_leaves) == len(e_leaves), what
    for e, x, o in zip(e_leaves, x_leaves, o_leaves):
        assert o.shape == x.shape, (what, o.shape, x.shape)
        assert np.all(np.isfinite(np.asarray(o, np.float32))), f"{what}: non-finite output"
        rep = exact_rule_report(np.asarray(e), np.asarray(x), np.asarray(o), workload.atol, workload.rtol)
        assert rep["passed"], (
            f"{what}: {rep['n_fail']}/{np.asarray(o).size} elements outside the allowance "
            f"(candidate max abs err {rep['candidate']['max_abs']:.4g}, XLA's "
            f"{rep['xla']['max_abs']:.4g})"
        )


def check_matches_baseline(mod, workload, profile: str, seeds, device_kind=None, run=None) -> None:
    """Candidate (TPU interpret mode) judged as the harness judges it, per seed: shapes and
    dtypes equal to the XLA baseline's, all finite, within the tolerance plus XLA's own error
    of the exact answer."""
    import jax

    baseline = jax.jit(workload.baseline(profile))
    for seed in seeds:
        inputs = workload.create_inputs(profile, jax.random.key(seed))
        ref = baseline(*inputs)
        out = run(mod, inputs) if run is not None else run_interpret(mod, inputs, device_kind)
        for r, o in zip(jax.tree.leaves(ref), jax.tree.leaves(out)):
            assert o.dtype == r.dtype, (seed, o.dtype, r.dtype)
        _compare(exact_reference(workload, profile, inputs), ref, out, workload, f"seed {seed} vs baseline")


def exact_reference(workload, profile: str, inputs):
    """The exact answer the harness judges against (``Workload.exact``)."""
    import jax

    return jax.jit(workload.exact(profile))(*inputs)


def check_matches_exact(mod, workload, profile: str, seeds, device_kind=None) -> None:
    """Candidate (TPU interpret mode) vs the float32 evaluation of the same computation, with
    the suite's tolerance alone (no allowance): the kernel is correct outright."""
    import jax

    for seed in seeds:
        inputs = workload.create_inputs(profile, jax.random.key(seed))
        out = run_interpret(mod, inputs, device_kind)
        exact = exact_reference(workload, profile, inputs)
        _compare(exact, exact, out, workload, f"seed {seed} vs float32 reference")


def lower_for_gpu(mod, workload, profile: str = "full"):
    """Lower the candidate for CUDA at the profile's shapes on this (CPU) host: runs Pallas's
    Triton lowering (block shapes, unsupported ops) without a GPU. The Triton custom call has no
    serialization guarantee, which only matters for stored programs, so that check is off."""
    import jax

    set_profile(mod, workload, profile)
    triton = jax.export.DisabledSafetyCheck.custom_call("__gpu$xla.gpu.triton")
    exported = jax.export.export(jax.jit(mod.workload), platforms=["cuda"], disabled_checks=[triton])(
        *workload.input_specs(profile)
    )
    text = exported.mlir_module()
    assert "__gpu$xla.gpu.triton" in text, "no Pallas Triton kernel in the lowered program"
    return text


def lower_for_tpu(mod, workload, profile: str = "full", device_kind=None):
    """Lower the candidate for TPU at the profile's shapes on this (CPU) host: runs the Pallas
    Mosaic lowering, which raises the TPU tiling and API errors, without running anything."""
    import jax

    set_profile(mod, workload, profile)
    with tpu_target(device_kind):
        exported = jax.export.export(jax.jit(mod.workload), platforms=["tpu"])(*workload.input_specs(profile))
    text = exported.mlir_module()
    assert "tpu_custom_call" in text, "no Pallas TPU kernel in the lowered program"
    return exported
