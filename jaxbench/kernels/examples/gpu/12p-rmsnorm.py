# JAXBench example candidate: 12p RMSNorm, a row-per-program Pallas GPU (Triton) kernel.
#
# Same interface as the TPU examples one directory up: one file defining `workload(x, scale)`
# with the baseline's inputs and output; imports limited to jax, jax.numpy,
# jax.experimental.pallas (+ its tpu/triton modules), numpy, functools, math; static values
# from CONFIG, sizes from the shapes. Written for the GPU (Triton) backend and never with
# `interpret=True`: on a CPU host the harness runs it under Pallas interpret mode.
#
# The kernel: x (B, S, E) is viewed as (B*S, E); each program normalises BLOCK_ROWS rows,
# holding the whole embedding axis in registers (Triton block dims must be powers of two, so
# E is padded to one with masked loads), with float32 statistics rounded where the baseline
# rounds.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

CONFIG = {"epsilon": 1e-5}


def _pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def _rmsnorm_kernel(x_ref, scale_ref, o_ref, *, eps, emb, rows):
    br, be = o_ref.shape
    r0 = pl.program_id(0) * br
    row_ok = (r0 + jnp.arange(br)) < rows
    col_ok = jnp.arange(be) < emb
    mask = row_ok[:, None] & col_ok[None, :]
    x = plgpu.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
    mean2 = jnp.sum(x * x, axis=-1, keepdims=True) / emb  # padding columns are zeros
    normed = (x * jax.lax.rsqrt(mean2 + eps)).astype(o_ref.dtype)
    scale = plgpu.load(scale_ref, mask=col_ok, other=0.0)
    plgpu.store(o_ref, (normed * scale[None, :]).astype(o_ref.dtype), mask=mask)


def workload(x, scale):
    eps = float(CONFIG.get("epsilon", 1e-5))
    *lead, emb = x.shape
    rows = 1
    for d in lead:
        rows *= d
    be = _pow2(emb)
    # a row of 8192 bf16 fits one program's registers; a few rows per program when they are short
    br = max(1, min(8, 4096 // be))
    out = pl.pallas_call(
        functools.partial(_rmsnorm_kernel, eps=eps, emb=emb, rows=rows),
        out_shape=jax.ShapeDtypeStruct((rows, emb), x.dtype),
        grid=(pl.cdiv(rows, br),),
        in_specs=[pl.BlockSpec((br, be), lambda i: (i, 0)), pl.BlockSpec((be,), lambda i: (0,))],
        out_specs=pl.BlockSpec((br, be), lambda i: (i, 0)),
        compiler_params=plgpu.CompilerParams(num_warps=8 if be >= 4096 else 4, num_stages=1),
    )(x.reshape(rows, emb), scale)
    return out.reshape(x.shape)
