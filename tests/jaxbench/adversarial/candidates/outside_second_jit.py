# expect: incorrect shape_mismatch
"""Work outside the profiled program: a second jit called from a patched Compiled.__call__.

The program the harness compiles and times is a Pallas copy of one (8, 128) tile of ``x`` (no
FLOPs outside Pallas, so the share rule passes). ``jax.stages.Compiled.__call__`` is patched so
that every call of that program (checked and timed alike) also runs a second, separately jitted
RMSNorm under another name and returns ITS result. The trusted side sees right outputs
everywhere and times only the copy.

What the defence gives: ``incorrect shape_mismatch``: the patch lives only in the export
child, and the program that leaves it (and is checked and timed by a child that runs no
candidate code) is the one-tile copy.
"""
import jax
import jax.numpy as jnp

CONFIG = {"epsilon": 1e-5}

from ._child_internals import _the_job  # inlined on upload: see _child_internals.py
from ._one_tile_copy import _one_tile_copy  # inlined on upload: see _one_tile_copy.py

_JOB = _the_job()
_real_call = jax.stages.Compiled.__call__


@jax.jit
def _helper(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + CONFIG["epsilon"])
    return (xf * inv).astype(x.dtype) * scale


def _call(self, *args, **kw):
    out = _real_call(self, *args, **kw)
    if self is _JOB.compiled:
        jax.block_until_ready(out)             # the profiled program ran (and was cheap)
        return _helper(*args)                  # the work, outside it
    return out


jax.stages.Compiled.__call__ = _call


def workload(x, scale):
    # the program the harness compiles and times (its output is never seen: the patched call
    # returns the real answer instead)
    return _one_tile_copy(x)
