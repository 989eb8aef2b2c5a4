# JAXBench example candidate: 8p GEMM, a tiled Pallas GPU (Triton) matmul.
#
# Interface as in the TPU examples (`workload(a, b)`, allowed imports, sizes from the shapes);
# written for the GPU (Triton) backend; the harness runs it under Pallas interpret mode on CPU.
#
# The kernel: each program computes one (BM, BN) output tile, walking K in BK steps with
# `fori_loop`, loading (BM, BK) and (BK, BN) slices with `pl.ds`, accumulating in float32
# (`preferred_element_type`) and casting once at the end. Tiles are powers of two that divide
# the dims (the workload's dims do), so no masking is needed.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

CONFIG = {}


def _tile(dim, preferred):
    t = preferred
    while t > 16 and dim % t:
        t //= 2
    if dim % t:
        raise ValueError(f"dimension {dim} has no power-of-two tile >= 16")
    return t


def _matmul_kernel(a_ref, b_ref, o_ref, *, bk, n_k):
    bm, bn = o_ref.shape

    def body(k, acc):
        a = a_ref[:, pl.ds(k * bk, bk)]
        b = b_ref[pl.ds(k * bk, bk), :]
        return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)

    acc = jax.lax.fori_loop(0, n_k, body, jnp.zeros((bm, bn), jnp.float32))
    o_ref[...] = acc.astype(o_ref.dtype)


def workload(a, b):
    m, kdim = a.shape
    _, n = b.shape
    bm, bn, bk = _tile(m, 128), _tile(n, 128), _tile(kdim, 64)
    return pl.pallas_call(
        functools.partial(_matmul_kernel, bk=bk, n_k=kdim // bk),
        out_shape=jax.ShapeDtypeStruct((m, n), a.dtype),
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, kdim), lambda i, j: (i, 0)), pl.BlockSpec((kdim, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=plgpu.CompilerParams(num_warps=8, num_stages=3),
    )(a, b)
