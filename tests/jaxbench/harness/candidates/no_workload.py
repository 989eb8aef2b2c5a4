# expect: rejected no_workload
# Defines a kernel but no `workload` entry point.
import jax.numpy as jnp


def rmsnorm(x, scale):
    return x
