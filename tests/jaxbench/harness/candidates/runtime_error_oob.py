# expect: incorrect not_allclose
# Traces and compiles, then reads past the end of the array: the index map walks out of bounds.
# The cpu target's generic Pallas interpreter clamps the block index as XLA's dynamic slices do
# (TPU interpret mode raised), so the last blocks are read twice and the answer is wrong.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, s_ref, o_ref):
    o_ref[...] = x_ref[...] * s_ref[...]


def workload(x, scale):
    b, s, e = x.shape
    rows = b * s
    out = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype), grid=(rows // 128,),
        in_specs=[pl.BlockSpec((128, e), lambda i: (i + 7, 0)),
                  pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((128, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)
