# expect (artifact): rejected no_pallas_call
# The Pallas kernel sits in a lax.cond branch whose predicate never holds (the inputs are
# finite): the work is plain XLA beside it. A "contains a pallas_call" scan is satisfied; the
# artifact's facts are not: no kernel runs unconditionally, and the costliest branch counts.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    xf = x.astype(jnp.float32)
    y = (xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)).astype(x.dtype) * scale
    rows = y.size // y.shape[-1]
    y2 = y.reshape(rows, y.shape[-1])
    never = jnp.isnan(xf[0, 0]) if xf.ndim == 2 else jnp.isnan(xf.reshape(-1)[0])
    out = jax.lax.cond(
        never,
        lambda v: pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct(v.shape, v.dtype))(v),
        lambda v: v,
        y2,
    )
    return out.reshape(y.shape)
