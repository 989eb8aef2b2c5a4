# expect: incorrect | rejected timed_output_mismatch | rejected constant_output
"""Outputs that change from call to call: garbage on a random tenth of the calls.

XLA's stateful random-number generator (``lax.rng_uniform``) gives each execution of a program a
new draw, so a device program can return the honest kernel's answer on most calls and zeros on
others, with nothing in the candidate's Python deciding which. A harness that checks a sample of
the timed calls misses most of them.

What the defence gives: ``incorrect`` or ``rejected constant_output`` (a checked call drew
zeros), or ``rejected timed_output_mismatch``: the timer hashes every timed output, and each one
that differs from the checked output of the same inputs is written and checked.
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    draw = jax.lax.rng_uniform(jnp.float32(0), jnp.float32(1), ())
    return jnp.where(draw > 0.9, jnp.zeros_like(x), rmsnorm(x, scale))
