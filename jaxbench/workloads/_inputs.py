"""Input generation shared by the workload modules."""

import jax
import jax.numpy as jnp


def normal_bf16(key, shape, scale=1.0, shift=0.0):
    """Normal draws as bf16, drawn in float32 and rounded once: draws made directly in bf16 are
    biased (mean about -0.012), which long sums (an 8192-term GEMM, a sum against x >= 0) turn
    into a common offset."""
    return (shift + scale * jax.random.normal(key, shape, jnp.float32)).astype(jnp.bfloat16)
