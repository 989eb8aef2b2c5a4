# expect: timeout compile | compile_error
# A huge compile: a Python loop unrolls a million operations around a real kernel.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl



def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    y = x
    for i in range(1_000_000):
        y = y * 1.0000001 + 0.0
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype))(y * scale)
