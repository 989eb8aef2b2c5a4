# expect: incorrect not_allclose
# Off by a hair more than the tolerance on every element.
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py


def _off_by_a_hair_kernel(x_ref, s_ref, o_ref):
    # the perturbation inside the kernel, where the Pallas rule wants the work
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)
    y = ((x * inv).astype(o_ref.dtype) * s_ref[...]).astype(jnp.float32)
    o_ref[...] = (y * 1.03 + jnp.sign(y) * 0.011).astype(o_ref.dtype)


def workload(x, scale):
    return _row_blocked(_off_by_a_hair_kernel, x, scale)
