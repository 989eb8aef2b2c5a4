# expect: rejected host_callback
# Calls back into Python from the program (could return cached results, read the clock, ...).
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl


def _host_rmsnorm(x, scale):
    xf = np.asarray(x, np.float32)
    y = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)
    return (y.astype(x.dtype) * scale).astype(x.dtype)


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    y = jax.pure_callback(_host_rmsnorm, jax.ShapeDtypeStruct(x.shape, x.dtype), x, scale)
    b, s, e = x.shape
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct((b * s, e), x.dtype))(
        y.reshape(b * s, e)).reshape(x.shape)
