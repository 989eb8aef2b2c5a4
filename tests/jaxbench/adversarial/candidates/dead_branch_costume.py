# expect: rejected no_pallas_call | rejected work_outside_pallas
"""Dead-branch costume: plain XLA does the work; a Pallas kernel sits in a branch that never runs.

The branch's predicate depends on the data (no input is ever 1e30), so the kernel is in the
program but never executes. "The program contains a pallas_call" was true, and the FLOP walk
counted the cond's most expensive branch as the kernel's, so plain XLA passed as Pallas.

What the defence gives: ``rejected``: the trusted walk of the exported program counts a kernel
only where it runs unconditionally, and the XLA RMSNorm outside it is the workload's work.
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def _xla(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + CONFIG["epsilon"])
    return (xf * inv).astype(x.dtype) * scale


def workload(x, scale):
    never = x.reshape(-1)[0].astype(jnp.float32) > 1e30
    return jax.lax.cond(never, rmsnorm, _xla, x, scale)
