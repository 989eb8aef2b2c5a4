# expect: correct_slower
"""XLA in the timed calls: the checked program is an honest Pallas kernel, the timed one is not.

Wraps the child's ``Job.timing`` and, for the timing phase only, swaps the candidate's compiled
program for a plain-XLA RMSNorm compiled under the SAME harness-chosen program name. Its
outputs are right (the timed-output check passes), the trace holds exactly 50 executions of
``jit_<name>``, and the Pallas rules (pallas_call present, share of FLOPs outside Pallas) were
applied to the checked program only. On the CPU target an honest interpret-mode kernel is
~50x slower than XLA; this one comes out as a tie or faster.

What the defence gives: ``correct_slower``, the honest kernel's verdict: the timed program is
the exported one that was checked, timed in a child that runs no candidate code; the swap is
made in the export child, where nothing is timed.
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _the_job, _time_instead  # inlined on upload: see _child_internals.py

_JOB = _the_job()


def _xla(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + CONFIG["epsilon"])
    return (xf * inv).astype(x.dtype) * scale


_time_instead(_JOB, _xla)


def workload(x, scale):
    return rmsnorm(x, scale)
