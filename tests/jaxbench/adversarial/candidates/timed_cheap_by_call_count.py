# expect: correct_slower
"""Right answer for the checked calls only, detected by call count.

Patches ``jax.stages.Compiled.__call__`` in the child: the first calls of the candidate's
compiled program (the check phase runs every input set once) return the honest result; every
later call (the timing phase) returns the input unchanged without running anything. Defence:
the outputs of timed calls are checked too (a random timed call per timing set, drawn by the
trusted side), and the trace must hold exactly 50 executions of the program: the wrong timed
output is ``rejected timed_output_mismatch``.

Since the two-process harness the patch lives only in the export child, which runs no
program; the exported program is honest, so the verdict is the honest kernel's:
``correct_slower``. (Every timed output is also hashed against the checked output of its
inputs, so a device program that changes its answer between calls is caught:
``timed_random_garbage.py``.)
"""
import jax

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _the_job  # inlined on upload: see _child_internals.py


_real_call = jax.stages.Compiled.__call__
_calls = {"n": 0}
_JOB = _the_job()


def _call(self, *args, **kw):
    if self is _JOB.compiled:
        _calls["n"] += 1
        if _calls["n"] > 6:           # 3 check + 3 timing sets, each checked once
            return args[0]                                         # nothing computed
    return _real_call(self, *args, **kw)


jax.stages.Compiled.__call__ = _call


def workload(x, scale):
    return rmsnorm(x, scale)
