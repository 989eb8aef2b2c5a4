# expect: rejected work_outside_pallas
# XLA in a Pallas costume: the whole computation is plain XLA and a trivial copy pallas_call
# satisfies the "contains a pallas_call" rule. Caught by the rule that the Pallas kernels carry
# the work: 100% of the workload's FLOPs run outside them (jaxbench/verdict/pallas_share.py).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    xf = x.astype(jnp.float32)
    y = (xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)).astype(x.dtype) * scale
    rows = y.size // y.shape[-1]
    out = pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct((rows, y.shape[-1]), y.dtype))(
        y.reshape(rows, y.shape[-1]))
    return out.reshape(y.shape)
