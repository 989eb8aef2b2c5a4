# expect: rejected timed_output_mismatch
"""Right answer for the checked calls only, detected by call count.

Patches ``jax.stages.Compiled.__call__`` in the child: the first calls of the candidate's
compiled program (the check phase runs every input set once) return the honest result; every
later call (the timing phase) returns the input unchanged without running anything. Defence:
the outputs of timed calls are checked too (a random timed call per timing set, drawn by the
trusted side), and the trace must hold exactly 50 executions of the program: the wrong timed
output is ``rejected timed_output_mismatch``.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}


def _kernel(x_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.sum(x * x, axis=-1, keepdims=True) * (1.0 / x.shape[-1]) + eps)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...]


def rmsnorm(x, scale):
    """An honest row-blocked Pallas RMSNorm (as tests/harness/candidates/correct_rmsnorm.py)."""
    *lead, e = x.shape
    rows = x.size // e
    block = 256 if rows % 256 == 0 else rows
    out = pl.pallas_call(
        functools.partial(_kernel, eps=float(CONFIG["epsilon"])),
        out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype), grid=(rows // block,),
        in_specs=[pl.BlockSpec((block, e), lambda i: (i, 0)),
                  pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)


def _the_job():
    """The child's Job object (the harness's own code runs as __main__ in this process)."""
    import gc
    import sys
    main = sys.modules["__main__"]
    for o in gc.get_objects():
        if type(o).__name__ == "Job" and type(o).__module__ == main.__name__:
            return o
    raise RuntimeError("no Job found")


_real_call = jax.stages.Compiled.__call__
_calls = {"n": 0}
_JOB = _the_job()


def _call(self, *args, **kw):
    if self is _JOB.compiled:
        _calls["n"] += 1
        if _calls["n"] > 6:           # 3 check + 3 timing sets, each checked once
            return args[0]                                         # nothing computed
    return _real_call(self, *args, **kw)


jax.stages.Compiled.__call__ = _call


def workload(x, scale):
    return rmsnorm(x, scale)
