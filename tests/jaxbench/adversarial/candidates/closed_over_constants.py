# expect: rejected | incorrect
# Closes over constant inputs built at import, so XLA folds the work away.
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


_X = jax.random.normal(jax.random.key(0), (2, 256, 512), jnp.bfloat16)
_S = jnp.ones((512,), jnp.bfloat16)


def workload(x, scale):
    return rmsnorm(x * 0 + _X.astype(x.dtype), scale * 0 + _S)
