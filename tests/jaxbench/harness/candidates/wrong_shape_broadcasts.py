# expect: incorrect shape_mismatch
# Returns only the first batch row, shape (1, S, E): it would broadcast against (B, S, E).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    y = (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)).astype(o_ref.dtype)
    o_ref[...] = y * s_ref[...]


def workload(x, scale):
    b, s, e = x.shape
    out = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct((s, e), x.dtype))(
        x[0], scale.reshape(1, e))
    return out[None]
