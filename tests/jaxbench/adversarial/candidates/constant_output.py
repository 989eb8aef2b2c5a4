# expect: rejected constant_output | incorrect
# Returns a constant of the right shape and dtype through a kernel.
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py


def _plus_half_kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-5)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...] + jnp.asarray(0.5, o_ref.dtype)


def workload(x, scale):
    return _row_blocked(_plus_half_kernel, jnp.zeros_like(x), scale)   # the + 0.5 is inside the kernel
