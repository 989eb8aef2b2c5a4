# expect: compile_error
# Uses a Pallas API that does not exist.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def workload(x, scale):
    return pl.pallas_call_fused_rmsnorm(x, scale)
