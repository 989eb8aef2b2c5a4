# expect: compile_error pallas_error
# A BlockSpec whose rank does not match the array (2-D block for a 3-D input).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, s_ref, o_ref):
    o_ref[...] = x_ref[...] * s_ref[...]


def workload(x, scale):
    b, s, e = x.shape
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(b,),
        in_specs=[pl.BlockSpec((s, e), lambda i: (i, 0)), pl.BlockSpec((e,), lambda i: (0,))],
        out_specs=pl.BlockSpec((s, e), lambda i: (i, 0)),
    )(x, scale)
