# JAXBench example candidate: 41k Gemm + bias add + ReLU, the epilogue fused into a tiled
# Pallas TPU matmul.
#
# The candidate interface, in brief: one file defining `workload(*inputs)` with the baseline's
# inputs, output shapes and dtypes; imports limited to jax, jax.numpy, jax.experimental.pallas
# (+ .tpu/.gpu), numpy, functools, math; sizes read from the input shapes so the same file
# runs at the small profile on CPU (TPU interpret mode, chosen by the harness: never pass
# `interpret=True`) and at the full profile on TPU.
#
# The kernel: y = relu(x @ W + b). XLA runs the GEMM and then an elementwise pass over the
# (B, N) result; here the bias add and ReLU happen in VMEM on the f32 accumulator tile at the
# last K step, so the output is written to HBM exactly once. Grid (B/bm, N/bn, K/bk), K
# innermost and "arbitrary"; the bias enters as a (1, bn) block that follows the N index.
# Rounding mirrors the baseline: the GEMM result is rounded to bf16 before the bias add.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CONFIG = {}


def _tile(dim, preferred, align):
    """The largest multiple of `align` <= preferred dividing `dim`; else the whole dim."""
    t = min(preferred, dim)
    t -= t % align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _gemm_add_relu_kernel(x_ref, w_ref, b_ref, o_ref, acc_ref, *, n_k):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == n_k - 1)
    def _epilogue():
        dt = o_ref.dtype
        y = acc_ref[...].astype(dt).astype(jnp.float32)       # bf16 GEMM result
        y = (y + b_ref[...].astype(jnp.float32)).astype(dt)    # bias add in bf16
        o_ref[...] = jnp.maximum(y, jnp.zeros_like(y))


def workload(x, weight, bias):
    m, kdim = x.shape
    n = weight.shape[1]
    bm, bn, bk = _tile(m, 512, 8), _tile(n, 1024, 128), _tile(kdim, 1024, 128)
    n_k = kdim // bk
    return pl.pallas_call(
        functools.partial(_gemm_add_relu_kernel, n_k=n_k),
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
