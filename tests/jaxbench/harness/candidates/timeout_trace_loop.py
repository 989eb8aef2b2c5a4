# expect: compile_error compile_timeout
# timeouts: compile=8
# Never finishes tracing: an infinite loop inside workload().
import jax.numpy as jnp
from jax.experimental import pallas as pl  # noqa: F401


def workload(x, scale):
    n = 0
    while True:
        n += 1
    return x
