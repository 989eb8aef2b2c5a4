# expect: rejected trace_invalid | timeout timing | runtime_error oom
"""Trace bomb: a program whose profiler trace is as large as the device program can make it.

A correct Pallas RMSNorm whose grid visits every 8-row block 800 times over (the index
map ignores the second grid axis, so every visit rewrites the same, right answer). On the cpu
target the interpreted grid is a loop whose every step is traced: 51,200 steps a call, 55 calls,
millions of events. Before, the trusted parser spent ~30 s and 1.3 GB per 128 MiB of such a
trace before rejecting it.

What the defence gives: the profiler keeps the events in the timer's memory, so the timer's
memory limit ends it (``runtime_error oom``, measured here); a trace that fits is parsed within
the parser's caps in a resource-limited process (``rejected trace_invalid`` past them, ~3 s and
~120 MB at worst); a slower machine may hit the timing phase's limit first.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}
REVISITS = 800


def _kernel(x_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    ms = jnp.dot(x * x, jnp.ones((x.shape[-1], 1), jnp.float32)) * (1.0 / x.shape[-1])
    o_ref[...] = (x * jax.lax.rsqrt(ms + eps)).astype(o_ref.dtype) * s_ref[...]


def workload(x, scale):
    *lead, e = x.shape
    rows = x.size // e
    out = pl.pallas_call(
        functools.partial(_kernel, eps=float(CONFIG["epsilon"])),
        out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype),
        grid=(rows // 8, REVISITS),
        in_specs=[pl.BlockSpec((8, e), lambda i, j: (i, 0)), pl.BlockSpec((1, e), lambda i, j: (0, 0))],
        out_specs=pl.BlockSpec((8, e), lambda i, j: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)
