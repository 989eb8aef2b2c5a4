# The two programs the one-trace attacks choose between: an honest-looking XLA RMSNorm (right
# answers, no Pallas) and a Pallas kernel that copies x (a Pallas kernel, wrong answers). Before
# one trace, an attack traced the XLA one for the timed cpu program and the copy for the TPU
# export the Pallas share was counted on: ranked first as correct_faster, share 0% outside.
# Inlined on upload (see _honest_rmsnorm.py).
import jax
import jax.numpy as jnp


def _xla(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)
    return (xf * inv).astype(x.dtype) * scale


def _copy_kernel(x_ref, s_ref, o_ref):
    o_ref[...] = x_ref[...]
