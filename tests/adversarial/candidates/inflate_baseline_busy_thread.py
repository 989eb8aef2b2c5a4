# expect: correct_slower
"""Inflates the baseline with a busy thread that runs only while the baseline runs.

The child is confined to one CPU core. A patched ``jax.stages.Compiled.__call__`` recognises
the baseline's compiled program (the job's) and, for each of its calls, wakes a thread that
burns the core with numpy matmuls (the GIL released) until the call returns; the candidate's
own calls run undisturbed. On the CPU target the profiler's per-thunk spans are wall time, so
the baseline's measured time grows with the contention.

Defence: the baseline guard (clean child). The kernel itself is honest: a correct defence
leaves its outcome, ``correct_slower``. Inflation below the guard's limit (2.5x on CPU) is NOT
DEFENDED (see inflate_baseline_under_guard.py); on accelerators a host thread cannot slow a
device program, but anything the candidate enqueues on the device beside it can.
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


import threading  # noqa: E402

import numpy as np  # noqa: E402

_JOB = _the_job()
_real_call = jax.stages.Compiled.__call__
_busy = threading.Event()


def _burner():
    a = np.random.default_rng(0).standard_normal((192, 192)).astype(np.float32)
    while True:
        _busy.wait()
        a = np.tanh(a @ a)


threading.Thread(target=_burner, daemon=True).start()


def _call(self, *args, **kw):
    if self is not getattr(_JOB, "baseline", None):
        return _real_call(self, *args, **kw)
    _busy.set()
    try:
        return jax.block_until_ready(_real_call(self, *args, **kw))
    finally:
        _busy.clear()


jax.stages.Compiled.__call__ = _call


def workload(x, scale):
    return rmsnorm(x, scale)
