# JAXBench example candidate: 1p causal flash attention, a Pallas GPU (Triton) kernel.
#
# Interface as in the TPU examples (`workload(query, key, value)`, (batch, heads, seq, dim)
# layout, allowed imports, sizes from the shapes); written for the GPU (Triton) backend; the
# harness runs it under Pallas interpret mode on CPU.
#
# The kernel: one program per (query block, batch, head). It walks the key/value blocks up to
# the diagonal only (causal: later blocks are all masked, so neither loaded nor computed) with
# an online softmax in float32 registers; scores are rounded to the input dtype and scaled in
# it where the baseline does, masked with -1e9 as the baseline masks.
import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

CONFIG = {}

_MASK_VALUE = -1e9


def _block(seq):
    for b in (128, 64, 32, 16):
        if seq % b == 0:
            return b
    raise ValueError(f"sequence length {seq} has no block size")


def _flash_kernel(q_ref, k_ref, v_ref, o_ref, *, scale, bq, bk):
    qi = pl.program_id(0)
    q = q_ref[...]  # (bq, d)
    d = q.shape[-1]
    rows = qi * bq + jnp.arange(bq)

    def body(kb, carry):
        m_prev, l_prev, acc = carry
        k = k_ref[pl.ds(kb * bk, bk), :]
        v = v_ref[pl.ds(kb * bk, bk), :]
        s = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)  # q @ k.T
        s = (s.astype(q.dtype) * jnp.asarray(scale, q.dtype)).astype(jnp.float32)
        cols = kb * bk + jnp.arange(bk)
        s = jnp.where(cols[None, :] <= rows[:, None], s, _MASK_VALUE)
        m_new = jnp.maximum(m_prev, jnp.max(s, axis=-1))
        alpha = jnp.exp(m_prev - m_new)
        p = jnp.exp(s - m_new[:, None])
        l_new = alpha * l_prev + jnp.sum(p, axis=-1)
        acc = acc * alpha[:, None] + jnp.dot(p.astype(v.dtype), v, preferred_element_type=jnp.float32)
        return m_new, l_new, acc

    # key blocks that hold a position <= the block's last query position
    n_kv = jax.lax.div((qi + 1) * bq + bk - 1, bk)
    init = (jnp.full((bq,), -jnp.inf, jnp.float32), jnp.zeros((bq,), jnp.float32), jnp.zeros((bq, d), jnp.float32))
    _, l, acc = jax.lax.fori_loop(0, n_kv, body, init)
    o_ref[...] = (acc / l[:, None]).astype(o_ref.dtype)


def workload(query, key, value):
    b, h, s, d = query.shape
    bq = bk = _block(s)
    # whole sequences of K and V per (batch, head): the kernel slices the blocks it needs
    kv_spec = pl.BlockSpec((None, None, s, d), lambda qi, bi, hi: (bi, hi, 0, 0))
    return pl.pallas_call(
        functools.partial(_flash_kernel, scale=1.0 / math.sqrt(d), bq=bq, bk=bk),
        out_shape=jax.ShapeDtypeStruct(query.shape, query.dtype),
        grid=(s // bq, b, h),
        in_specs=[pl.BlockSpec((None, None, bq, d), lambda qi, bi, hi: (bi, hi, qi, 0)), kv_spec, kv_spec],
        out_specs=pl.BlockSpec((None, None, bq, d), lambda qi, bi, hi: (bi, hi, qi, 0)),
        compiler_params=plgpu.CompilerParams(num_warps=4 if d <= 64 else 8, num_stages=2),
    )(query, key, value)
