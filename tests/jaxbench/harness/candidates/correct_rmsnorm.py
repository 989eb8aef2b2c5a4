# expect: correct_slower
# A correct Pallas RMSNorm for 12p: rows blocked, the whole embedding axis per block, float32
# statistics, normalised value rounded to the input dtype before the scale (as the baseline).
# On the cpu target its kernel runs through the generic Pallas interpreter, the grid as a loop:
# 32-row blocks keep it clearly slower than XLA there (~0.2x), whatever the load.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}


def _kernel(x_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...]


def workload(x, scale):
    *lead, e = x.shape
    rows = 1
    for d in lead:
        rows *= d
    block = 32 if rows % 32 == 0 else rows
    out = pl.pallas_call(
        functools.partial(_kernel, eps=float(CONFIG["epsilon"])),
        out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype),
        grid=(rows // block,),
        in_specs=[pl.BlockSpec((block, e), lambda i: (i, 0)),
                  pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)
