# expect: rejected host_callback
"""Replayed answers: keep the checked outputs and hand them back when the same inputs come again.

A host callback keeps a table from a hash of the inputs to the output; the first call on an
input set computes the honest kernel, every later call on it (the timed ones) returns the kept
answer at the cost of a lookup. Timed calls were 1.5-15x "faster" before the two-process
harness.

What the defence gives: ``rejected host_callback``: the program must leave the export child as
a serialized program, and a callback into that process cannot be serialized.
"""
import hashlib

import jax
import numpy as np

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py

_KEPT = {}


def _lookup(x, honest):
    key = hashlib.sha1(np.asarray(x).tobytes()).hexdigest()
    return _KEPT.setdefault(key, np.asarray(honest))


def workload(x, scale):
    honest = rmsnorm(x, scale)
    return jax.pure_callback(_lookup, jax.ShapeDtypeStruct(x.shape, x.dtype), x, honest)
