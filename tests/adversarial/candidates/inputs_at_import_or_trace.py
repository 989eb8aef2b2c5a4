# expect: correct_slower
"""Looks for the input sets at import time and at trace time, to do the work there (cached as
constants for every later call).

If any input file is visible before the check phase (under the child's input directory, /tmp,
the working directory), it memorises the first set's answer as a constant and returns that for
every call (wrong for the other sets: ``incorrect``/``rejected``). Defence: input sets reach
the child only when the phase that uses them starts, after the module is imported and the
program compiled; none is visible, so this candidate falls back to its honest kernel:
``correct_slower``. It prints what it saw (PROBE-INPUTS).
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


import os  # noqa: E402

import numpy as np  # noqa: E402


def _find_inputs():
    found = []
    for root in ("/in", "/tmp", os.getcwd(), "/"):
        for dirpath, dirs, files in os.walk(root):
            if dirpath.startswith(("/proc", "/sys", "/site", "/dev")):
                dirs[:] = []
                continue
            found += [os.path.join(dirpath, f) for f in files if f.endswith(".npy")]
            if len(found) > 4:
                return found
    return found


_AT_IMPORT = _find_inputs()
print("PROBE-INPUTS import", _AT_IMPORT, flush=True)


def workload(x, scale):
    seen = _AT_IMPORT or _find_inputs()
    print("PROBE-INPUTS trace", seen, flush=True)
    xs = [p for p in seen if p.endswith("/0.npy")]
    if xs:
        raw = np.load(xs[0]).view(jnp.bfloat16).astype(np.float32)
        y = raw / np.sqrt(np.mean(raw * raw, axis=-1, keepdims=True) + 1e-5)
        return rmsnorm(jnp.asarray(y, x.dtype) + 0 * x, scale)   # memorised, closed over
    return rmsnorm(x, scale)
