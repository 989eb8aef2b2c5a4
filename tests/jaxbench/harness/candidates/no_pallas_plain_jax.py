# expect: rejected no_pallas_call
# Correct plain JAX (a copy of the baseline), but no Pallas kernel.
import jax
import jax.numpy as jnp

CONFIG = {"epsilon": 1e-5}


def workload(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + CONFIG["epsilon"])
    return (xf * inv).astype(x.dtype) * scale
