# expect: rejected host_callback
# Caches the first result on the host (through a callback) and returns it for every later call.
import jax

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


import numpy as np

_CACHE = {}


def _remember(y):
    if "out" not in _CACHE:
        _CACHE["out"] = np.asarray(y)
    return _CACHE["out"]


def workload(x, scale):
    y = rmsnorm(x, scale)
    return jax.pure_callback(_remember, jax.ShapeDtypeStruct(y.shape, y.dtype), y)
