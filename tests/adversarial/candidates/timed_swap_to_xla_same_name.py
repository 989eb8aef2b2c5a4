# expect: correct_faster | correct_tie | correct_slower
# NOT DEFENDED: the expectation records the gap (see /docs/#trust); a defence must change it to rejected
"""XLA in the timed calls: the checked program is an honest Pallas kernel, the timed one is not.

Wraps the child's ``Job.timing`` and, for the timing phase only, swaps the candidate's compiled
program for a plain-XLA RMSNorm compiled under the SAME harness-chosen program name. Its
outputs are right (the timed-output check passes), the trace holds exactly 50 executions of
``jit_<name>``, and the Pallas rules (pallas_call present, share of FLOPs outside Pallas) were
applied to the checked program only. On the CPU target an honest interpret-mode kernel is
~50x slower than XLA; this one comes out as a tie or faster.

What a correct defence gives: ``correct_slower`` (the timed program is the checked one, as when
the candidate's program is exported and timed in a child that runs no candidate code) or
``rejected`` (the swap detected). NOT DEFENDED while the candidate's Python shares the process
that runs the timing loop (TRUST.md 1: in-process checks are tripwires, not walls).
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


_JOB = _the_job()
_real_timing = type(_JOB).timing


def _xla(x, scale):
    xf = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + CONFIG["epsilon"])
    return (xf * inv).astype(x.dtype) * scale


def _timing(self, *args, **kw):
    import sys
    main = sys.modules["__main__"]
    real = self.compiled
    self.compiled = jax.jit(self.named(_xla)).lower(*main.input_specs(self.manifest)).compile()
    try:
        return _real_timing(self, *args, **kw)
    finally:
        self.compiled = real


type(_JOB).timing = _timing


def workload(x, scale):
    return rmsnorm(x, scale)
