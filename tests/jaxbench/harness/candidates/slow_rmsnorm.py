# expect: correct_slower
# Correct but slow: 8-row blocks (many grid steps) and the statistics computed twice.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}


def _kernel(x_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    ms = jnp.mean(x * x, axis=-1, keepdims=True)
    ms = 0.5 * (ms + jnp.sum(x * x, axis=-1, keepdims=True) / x.shape[-1])
    o_ref[...] = (x * jax.lax.rsqrt(ms + eps)).astype(o_ref.dtype) * s_ref[...]


def workload(x, scale):
    b, s, e = x.shape
    rows = b * s
    out = pl.pallas_call(
        functools.partial(_kernel, eps=float(CONFIG["epsilon"])),
        out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype),
        grid=(rows // 8,),
        in_specs=[pl.BlockSpec((8, e), lambda i: (i, 0)), pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((8, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(b, s, e)
