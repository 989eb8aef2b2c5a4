# JAXBench example candidate: 8p GEMM, a tiled Pallas TPU matmul with an f32 accumulator.
#
# The candidate interface, in brief: one file defining `workload(*inputs)` with the baseline's
# inputs, output shapes and dtypes; imports limited to jax, jax.numpy, jax.experimental.pallas
# (+ .tpu/.gpu), numpy, functools, math; sizes read from the input shapes so the same file
# runs at the small profile on CPU (TPU interpret mode, chosen by the harness: never pass
# `interpret=True`) and at the full profile on TPU.
#
# The kernel: C = A @ B with a 3-D grid (M/bm, N/bn, K/bk). The K axis is last and marked
# "arbitrary" (sequential): every (i, j) output tile stays resident in VMEM while the K tiles
# stream through, accumulating into an f32 scratch buffer that is zeroed at k == 0 and cast to
# the output dtype at the last k. The M and N axes are "parallel" (megacore may split them).
# Tiles are multiples of (8, 128) on their last two dims and sized so that the double-buffered
# A, B and C tiles plus the accumulator stay around 10 MiB of VMEM at full size.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CONFIG = {}


def _tile(dim, preferred, align):
    """The largest tile <= preferred that divides `dim` and is a multiple of `align`; the full
    dimension when none is (a block equal to the array extent is always legal)."""
    t = min(preferred, dim)
    t -= t % align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _matmul_kernel(a_ref, b_ref, o_ref, acc_ref, *, n_k):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == n_k - 1)
    def _store():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def workload(a, b):
    m, kdim = a.shape
    _, n = b.shape
    bm = _tile(m, 512, 8)
    bn = _tile(n, 1024, 128)
    bk = _tile(kdim, 1024, 128)
    n_k = kdim // bk
    return pl.pallas_call(
        functools.partial(_matmul_kernel, n_k=n_k),
        out_shape=jax.ShapeDtypeStruct((m, n), a.dtype),
        grid=(m // bm, n // bn, n_k),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
            pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(a, b)
