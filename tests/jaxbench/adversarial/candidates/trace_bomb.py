# expect: rejected trace_invalid | timeout timing | rejected implausible_timing
"""Trace bomb: a program that makes the profiler trace as large as it can.

An honest kernel, plus a loop of a million integer steps seeded from the data (so it cannot be
folded away, and integer steps cost no FLOPs), each step a separate event in the CPU runtime's
trace: 55 calls write tens of millions of events. Before, the trusted parser spent ~30 s and
1.3 GB per 128 MiB of such a trace before rejecting it.

What the defence gives: ``rejected trace_invalid`` (the bounded parser refuses it within its
caps, in a resource-limited process), or a timeout of the timing phase.
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    seed = jax.lax.bitcast_convert_type(x.reshape(-1)[:2], jnp.int16).astype(jnp.int32)[0]
    n = jax.lax.fori_loop(0, 1_000_000, lambda i, c: (c ^ i) + 1, seed)
    return rmsnorm(x, scale) + (n == 7).astype(x.dtype) * 0
