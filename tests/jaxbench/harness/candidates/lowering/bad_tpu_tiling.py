# expect (lower, tpu, full): compile_error pallas_error
# Runs under interpret mode, but its 100-row blocks break the TPU's (8, 128) tiling rule:
# the pre-check (lowering for TPU at the full shapes) must catch it without a TPU.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...]


def workload(x, scale):
    b, s, e = x.shape
    rows = b * s
    out = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype), grid=(pl.cdiv(rows, 100),),
        in_specs=[pl.BlockSpec((100, e), lambda i: (i, 0)), pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((100, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)
