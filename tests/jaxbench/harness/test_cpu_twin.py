"""The cpu twin (jaxbench/profiling/cpu_twin.py): the judged TPU program with each numbered kernel
call replaced by its kernel's interpreted program, and nothing else changed. Built here the way
the export child builds its artifacts (one trace, the TPU lowering with numbered sites, each
kernel exported alone through the interpreter), then assembled as the timer does."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.export import _export as jexport
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.pallas import pallas_call as pc
from jax.experimental import pallas as pl

from jaxbench.profiling.cpu_twin import SITE_ATTR, TwinError, cpu_twin

SPECS = [jax.ShapeDtypeStruct((16, 128), jnp.float32)] * 2


def _scale_add(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0 + y_ref[...]


def _kernel(x, y):
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
    return pl.pallas_call(
        _scale_add, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,), in_specs=[spec] * 2, out_specs=spec
    )(x, y)


def workload(x, y):
    return jnp.tanh(_kernel(x, y)) @ y.T


def _artifacts(fn, *, number=True):
    """(judged TPU program, [interpreted kernels]) from one trace of ``fn``."""
    traced = jax.jit(fn).trace(*SPECS)
    sites = []

    def lower(ctx, *args, **params):
        block = ir.InsertionPoint.current.block
        before = len(block.operations)
        outs = pc._pallas_call_lowering(ctx, *args, **params)
        (call,) = [o for o in list(block.operations)[before:] if o.operation.name == "stablehlo.custom_call"]
        if number:
            call.operation.attributes[SITE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), len(sites))
        sites.append(([jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ctx.avals_in], dict(params, interpret=True)))
        return outs

    lowered = traced.lower(
        lowering_platforms=("tpu",),
        _private_parameters=mlir.LoweringParameters(
            override_lowering_rules=((pc.pallas_call_p, lower),), for_export=True, hoist_constants_as_args=False
        ),
    )
    judged = jexport._export_lowered(lowered, traced.jaxpr, traced.fun_name)
    kernels = []
    for specs, params in sites:
        kernels.append(
            jax.export.export(jax.jit(lambda *a, p=params: pc.pallas_call_p.bind(*a, **p)), platforms=["cpu"])(*specs)
        )
    return judged, kernels


def _ops_outside(text):
    """The operations of ``main`` (the kernels live in their own functions)."""
    main = text[text.index("func.func public @main") :]
    main = main[: main.index("\n  }")]
    return [m for m in re.findall(r"(stablehlo\.\w+|call @\w+)", main) if not m.startswith("stablehlo.custom_call")]


def test_the_twin_runs_the_judged_program_with_its_kernels_interpreted():
    judged, kernels = _artifacts(workload)
    twin = cpu_twin(judged, kernels)
    assert twin.platforms == ("cpu",) and twin.in_avals == judged.in_avals and twin.out_avals == judged.out_avals
    x, y = (jnp.asarray(np.random.default_rng(i).random((16, 128)), jnp.float32) for i in (0, 1))
    want = jnp.tanh(x * 2 + y) @ y.T
    np.testing.assert_allclose(np.asarray(jax.jit(twin.call)(x, y)), np.asarray(want), rtol=1e-5, atol=1e-5)
    # outside the kernel, the twin's main is the judged main, operation for operation
    judged_ops = [o for o in _ops_outside(judged.mlir_module())]
    twin_ops = _ops_outside(twin.mlir_module())
    assert [o for o in twin_ops if not o.startswith("call @")] == judged_ops
    assert sum(o.startswith("call @jaxbench_kernel_") for o in twin_ops) == 1
    assert "tpu_custom_call" not in twin.mlir_module()


def test_each_site_gets_its_own_kernel():
    def two(x, y):
        return _kernel(x, y) + _kernel(y, x) * 3.0

    judged, kernels = _artifacts(two)
    assert len(kernels) == 2
    x, y = (jnp.asarray(np.random.default_rng(i).random((16, 128)), jnp.float32) for i in (2, 3))
    got = jax.jit(cpu_twin(judged, kernels).call)(x, y)
    np.testing.assert_allclose(np.asarray(got), np.asarray((x * 2 + y) + (y * 2 + x) * 3.0), rtol=1e-6)


def test_a_kernel_without_a_site_number_cannot_be_interpreted():
    judged, kernels = _artifacts(workload, number=False)
    with pytest.raises(TwinError) as err:
        cpu_twin(judged, kernels)
    assert err.value.category == "cpu_unsupported"


def test_kernels_that_do_not_fit_their_sites_are_refused():
    judged, kernels = _artifacts(workload)
    with pytest.raises(TwinError, match="belong to no site"):
        cpu_twin(judged, kernels + kernels)
    with pytest.raises(TwinError, match="no kernel of its own"):
        cpu_twin(judged, [])
    # a kernel of another signature in the site's place
    other = jax.export.export(jax.jit(lambda x, y: (x[:8] + y[:8],)), platforms=["cpu"])(*SPECS)
    with pytest.raises(TwinError, match="signature"):
        cpu_twin(judged, [other])
    with pytest.raises(TwinError, match="not a TPU"):
        cpu_twin(kernels[0], kernels)
