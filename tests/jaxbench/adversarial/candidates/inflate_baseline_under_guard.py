# expect: compile_error import_error
"""Inflates the baseline by touching its program by name: ~2x, inside the guard's margin.

As inflate_baseline_by_name.py, but the replacement (compiled under the baseline's own
harness-chosen name) runs the exported baseline twice, chained, so the side-by-side baseline
takes about twice its time: below the guard's limit on the CPU target (2.5x the baseline timed
alone in a clean child), so the pairing is trusted and the reported speedup is about doubled.

Defended by the two-process harness: the baseline is compiled and timed only in the timer
child, which never runs candidate Python; this file runs in the export child, where no baseline
program exists (``/in/baseline.jaxexport`` is not there), so its import fails:
``compile_error import_error``. An inflation of any size is out of its reach.
"""
from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _swap_baseline, _the_job  # inlined on upload: see _child_internals.py

_JOB = _the_job()


def _twice_baseline(baseline):
    def twice(x, scale):
        first = baseline(x, scale)
        return baseline(x + (first[:1] * 0).astype(x.dtype), scale)
    return twice


_swap_baseline(_JOB, _twice_baseline)


def workload(x, scale):
    return rmsnorm(x, scale)
