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
import jax

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _the_job  # inlined on upload: see _child_internals.py

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
