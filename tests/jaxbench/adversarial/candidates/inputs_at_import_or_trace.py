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
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py

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
