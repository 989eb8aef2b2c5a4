# A wrong candidate for the level-2 test workload 51d: the honest kernel, except that it forgets
# the gate when the hidden axis is 256 wide, so c01-c04 are correct and c05 (the first 256-wide
# configuration) is not.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-6}


def _kernel(x_ref, g_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    mean2 = jnp.mean(x * x, axis=-1, keepdims=True)
    normed = (x * jax.lax.rsqrt(mean2 + eps)).astype(o_ref.dtype) * s_ref[...]
    gated = normed if o_ref.shape[-1] == 256 else normed * jax.nn.silu(g_ref[...])
    o_ref[...] = gated.astype(o_ref.dtype)


def workload(x, gate, scale):
    rows, hidden = x.shape
    block = 8 if rows % 8 == 0 else rows
    spec = pl.BlockSpec((block, hidden), lambda i: (i, 0))
    return pl.pallas_call(
        functools.partial(_kernel, eps=float(CONFIG["epsilon"])),
        grid=(rows // block,),
        in_specs=[spec, spec, pl.BlockSpec((hidden,), lambda i: (0,))],
        out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x, gate, scale)
