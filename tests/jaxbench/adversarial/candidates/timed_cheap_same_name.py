# expect: correct_slower
"""Right answer for the checked calls only, detected by the timing phase itself.

Wraps the child's ``Job.timing`` (the harness's code is ``__main__`` in this process) and, for
the timed calls only, swaps the candidate's compiled program for a cheaper one compiled under
the SAME harness-chosen program name (read from the job), so the trace still holds exactly 50
executions of ``jit_<name>``. The cheap program skips the normalisation (x * scale). Defence:
timed outputs are checked on the trusted side: ``rejected timed_output_mismatch``.

Since the two-process harness the wrapped ``Job.timing`` belongs to the export child, which
never times anything: the exported program is the honest one, ``correct_slower``.
"""
from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _the_job, _time_instead  # inlined on upload: see _child_internals.py

_JOB = _the_job()


def _cheap(x, scale):
    return x * scale


_time_instead(_JOB, _cheap)


def workload(x, scale):
    return rmsnorm(x, scale)
