# expect: incorrect not_allclose
# Forgets the learned scale: numerically wrong.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}


def _kernel(x_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    o_ref[...] = (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)).astype(o_ref.dtype)


def workload(x, scale):
    b, s, e = x.shape
    out = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct((b * s, e), x.dtype),
                         grid=(b * s // 128,),
                         in_specs=[pl.BlockSpec((128, e), lambda i: (i, 0))],
                         out_specs=pl.BlockSpec((128, e), lambda i: (i, 0)))(x.reshape(b * s, e))
    return out.reshape(b, s, e)
