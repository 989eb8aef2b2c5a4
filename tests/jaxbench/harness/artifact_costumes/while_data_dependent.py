# expect (artifact): rejected uncountable_work
# The XLA work runs inside a while_loop whose trip count comes from the data (1 at run time:
# x holds no value above 1e30), so a static count that took the loop once, or not at all,
# would be wrong either way. A trivial Pallas copy runs unconditionally beside it.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _rms(x, scale):
    xf = x.astype(jnp.float32)
    return (xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)).astype(x.dtype) * scale


def workload(x, scale):
    n = 1 + (jnp.max(x) > 1e30).astype(jnp.int32)
    _, y = jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, _rms(x, scale)), (jnp.int32(0), x))
    rows = y.size // y.shape[-1]
    out = pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct((rows, y.shape[-1]), y.dtype))(
        y.reshape(rows, y.shape[-1])
    )
    return out.reshape(y.shape)
