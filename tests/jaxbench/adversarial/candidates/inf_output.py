# expect: incorrect non_finite
# Right values except one Inf.
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    return rmsnorm(x, scale).at[0, 0, 0].set(jnp.inf)
