# JAXBench example candidate: 37k Matmul + Swish + scaling, the epilogue fused into a tiled
# Pallas TPU matmul.
#
# The candidate interface, in brief: one file defining `workload(*inputs)` with the baseline's
# inputs, output shapes and dtypes; imports limited to jax, jax.numpy, jax.experimental.pallas
# (+ .tpu/.gpu), numpy, functools, math; sizes read from the input shapes so the same file
# runs at the small profile on CPU (TPU interpret mode, chosen by the harness: never pass
# `interpret=True`) and at the full profile on TPU. Static values that are not shapes come
# from the module-level CONFIG, which the harness overwrites with the profile's parameters
# (here scaling_factor).
#
# The kernel: out = swish(x @ W + b) * scale. The bias add, Swish (y * sigmoid(y)) and the
# scaling run in VMEM on the accumulator tile at the last K step, so the (B, N) GEMM result
# never round-trips through HBM. This workload is precision-sensitive: the epilogue rounds to
# bf16 where the baseline does (GEMM result, bias add, Swish, scaling), computing each step
# in f32 in between.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CONFIG = {"scaling_factor": 2.0}


def _tile(dim, preferred, align):
    """The largest multiple of `align` <= preferred dividing `dim`; else the whole dim."""
    t = min(preferred, dim)
    t -= t % align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _matmul_swish_kernel(x_ref, w_ref, b_ref, o_ref, acc_ref, *, n_k, scale):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == n_k - 1)
    def _epilogue():
        dt = o_ref.dtype
        f32 = jnp.float32

        def rnd(v):                       # round to the output dtype, continue in f32
            return v.astype(dt).astype(f32)

        y = rnd(acc_ref[...])
        y = rnd(y + b_ref[...].astype(f32))
        y = rnd(y * rnd(jax.nn.sigmoid(y)))
        o_ref[...] = (y * scale).astype(dt)


def workload(x, weight, bias):
    scale = float(CONFIG.get("scaling_factor", 2.0))
    m, kdim = x.shape
    n = weight.shape[1]
    bm, bn, bk = _tile(m, 512, 8), _tile(n, 1024, 128), _tile(kdim, 1024, 128)
    n_k = kdim // bk
    return pl.pallas_call(
        functools.partial(_matmul_swish_kernel, n_k=n_k, scale=scale),
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, n_k),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
            pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
            pl.BlockSpec((1, bn), lambda i, j, k: (0, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, weight, bias.reshape(1, n))
