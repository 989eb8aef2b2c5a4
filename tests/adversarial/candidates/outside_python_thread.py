# expect: correct_faster | correct_tie | correct_slower
# NOT DEFENDED: the expectation records the gap (see /docs/#trust); a defence must change it to rejected
"""Work outside the profiled program: a Python thread computes the answer with numpy.

The program the harness compiles and times is a Pallas copy of one (8, 128) tile of ``x``. A
background thread, fed from a patched ``jax.stages.Compiled.__call__``, computes RMSNorm with
numpy on the host while the copy runs, and the patched call returns the thread's answer as a
device array (``jax.device_put``: a concrete jax.Array, so the structure checks pass).

What a correct defence gives: ``rejected`` or ``incorrect`` (the program itself returns one
tile: ``shape_mismatch``). NOT DEFENDED while the candidate's Python runs in the process that
executes and reports its program (TRUST.md 1).
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


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    # the program the harness compiles and times: a Pallas copy of one (8, 128) tile, almost
    # free (its output is never seen: the patched call returns the real answer instead)
    tile = x.reshape(-1, x.shape[-1])[:8, :128]
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct(tile.shape, x.dtype))(tile)
