# expect: incorrect dtype_mismatch
# Correct values, returned in float32 instead of bfloat16.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    y = (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)).astype(jnp.bfloat16)
    o_ref[...] = (y * s_ref[...]).astype(jnp.float32)


def workload(x, scale):
    b, s, e = x.shape
    out = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct((b * s, e), jnp.float32))(
        x.reshape(b * s, e), scale.reshape(1, e))
    return out.reshape(x.shape)
