# expect: correct_slower
"""Forged timed outputs: the timed calls compute nothing, the saved outputs are recomputed.

For the timing phase only, the candidate's compiled program is swapped for one that returns
zeros, compiled under the SAME harness-chosen name (50 executions of ``jit_<name>`` in the
trace, each almost free). The child's ``write_outputs`` (the harness's code, ``__main__`` in
this process) is patched: the outputs of the saved timed calls, which the trusted side checks,
are recomputed by the real program on the right inputs after the timed loop, outside the
profiled window. Every output the trusted side sees is right; every timed call did nothing.

What the defence gives: ``correct_slower``, the honest kernel's own verdict: the patch lives
only in the export child, which never runs a timing loop; the timer child, which runs no
candidate Python, times the exported program and hashes every timed output against the checked
output of the same inputs.
"""
import jax
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _the_job  # inlined on upload: see _child_internals.py

import sys  # noqa: E402

_JOB = _the_job()
_MAIN = sys.modules["__main__"]
_real_timing = type(_JOB).timing
_real_write = _MAIN.write_outputs
_state = {}


def _zeros(x, scale):
    return jnp.zeros_like(x)


def _write_outputs(tag, out):
    if tag.startswith("t") and "real" in _state:
        i = int(tag[1:])
        sids = _state["sets"]
        args = _MAIN.load_set(_JOB.manifest, sids[i % len(sids)])
        out = _state["real"](*args)
    return _real_write(tag, out)


def _timing(self, set_ids, *args, **kw):
    _state["real"], _state["sets"] = self.compiled, list(set_ids)
    self.compiled = jax.jit(self.named(_zeros)).lower(*_MAIN.input_specs(self.manifest)).compile()
    try:
        return _real_timing(self, set_ids, *args, **kw)
    finally:
        self.compiled = _state["real"]


type(_JOB).timing = _timing
_MAIN.write_outputs = _write_outputs


def workload(x, scale):
    return rmsnorm(x, scale)
