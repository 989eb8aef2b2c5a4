# expect: rejected
"""Uncountable-work costume: the work hides in a loop whose trip count depends on the data.

A one-tile Pallas copy is the "kernel"; the whole RMSNorm runs in plain XLA inside a
``while_loop`` whose bound is read from the input (it always runs once). The FLOP walk counted
such a loop once only when it could see it, and work it could not count counted 0.

What the defence gives: ``rejected``: a loop with a data-dependent trip count that holds work is
uncountable, and uncountable work fails closed (never counted as 0).
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import CONFIG  # inlined on upload: see _honest_rmsnorm.py
from ._one_tile_copy import _one_tile_copy  # inlined on upload: see _one_tile_copy.py


def _xla(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + CONFIG["epsilon"])
    return (xf * inv).astype(x.dtype) * scale


def workload(x, scale):
    trips = (jnp.abs(x.reshape(-1)[0]) < 1e30).astype(jnp.int32)  # always 1, unknown to the walk

    def body(carry):
        i, _ = carry
        return i + 1, _xla(x, scale)

    _, out = jax.lax.while_loop(lambda c: c[0] < trips, body, (jnp.int32(0), jnp.zeros_like(x)))
    return out + 0 * _one_tile_copy(x)[0, 0]
