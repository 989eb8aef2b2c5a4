# expect: rejected constant_output | incorrect
# Returns a constant of the right shape and dtype through a kernel.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...] + jnp.asarray(0.5, o_ref.dtype)


def rmsnorm(x, scale):
    *lead, e = x.shape
    rows = x.size // e
    out = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype), grid=(rows // 256,),
        in_specs=[pl.BlockSpec((256, e), lambda i: (i, 0)), pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((256, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)


def workload(x, scale):
    return rmsnorm(jnp.zeros_like(x), scale)      # the + 0.5 is inside the kernel
