# expect: rejected constant_output
# The "no-op exploit": a kernel that writes zeros.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _zeros(x_ref, o_ref):
    o_ref[...] = jnp.zeros(o_ref.shape, o_ref.dtype)


def workload(x, scale):
    b, s, e = x.shape
    out = pl.pallas_call(_zeros, out_shape=jax.ShapeDtypeStruct((b * s, e), x.dtype))(x.reshape(b * s, e))
    return out.reshape(x.shape)
