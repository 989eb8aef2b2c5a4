# expect: incorrect shape_mismatch
"""Work outside the profiled program: a Python thread computes the answer with numpy.

The program the harness compiles and times is a Pallas copy of one (8, 128) tile of ``x``. A
background thread, fed from a patched ``jax.stages.Compiled.__call__``, computes RMSNorm with
numpy on the host while the copy runs, and the patched call returns the thread's answer as a
device array (``jax.device_put``: a concrete jax.Array, so the structure checks pass).

What the defence gives: ``incorrect shape_mismatch``. The patched call lives only in the
export child; what leaves it is the exported program, the one-tile copy, whose output shape the
timer reads from the program before running it.
"""
import jax

from ._child_internals import _the_job  # inlined on upload: see _child_internals.py
from ._one_tile_copy import _one_tile_copy  # inlined on upload: see _one_tile_copy.py

import queue  # noqa: E402
import threading  # noqa: E402

import numpy as np  # noqa: E402

_JOB = _the_job()
_real_call = jax.stages.Compiled.__call__
_todo, _done = queue.Queue(), queue.Queue()


def _worker():
    while True:
        x, scale = _todo.get()
        xf = np.asarray(x, np.float32)
        y = (xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)).astype(x.dtype)
        _done.put((y.astype(np.float32) * np.asarray(scale, np.float32)).astype(x.dtype))


threading.Thread(target=_worker, daemon=True).start()


def _call(self, *args, **kw):
    if self is not _JOB.compiled:
        return _real_call(self, *args, **kw)
    _todo.put(tuple(np.asarray(a) for a in args))
    jax.block_until_ready(_real_call(self, *args, **kw))
    return jax.device_put(_done.get())


jax.stages.Compiled.__call__ = _call


def workload(x, scale):
    # the program the harness compiles and times (its output is never seen: the patched call
    # returns the real answer instead)
    return _one_tile_copy(x)
