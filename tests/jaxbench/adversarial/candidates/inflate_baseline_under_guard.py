# expect: correct_slower
"""Inflates the baseline by touching its program by name: ~2x, inside the guard's margin.

As inflate_baseline_by_name.py, but the replacement (compiled under the baseline's own
harness-chosen name) runs the exported baseline twice, chained, so the side-by-side baseline
takes about twice its time: below the guard's limit on the CPU target (2.5x the baseline timed
alone in a clean child), so the pairing is trusted and the reported speedup is about doubled.

NOT DEFENDED beyond the guard's margin: an inflation below the limit is indistinguishable from
the load the limit allows for. On the CPU target the honest interpret-mode kernel stays far
slower either way (the outcome stays ``correct_slower``, the speedup figure is inflated); a
kernel near parity would be lifted from a tie to ``correct_faster``. The structural fix is to
time the baseline beside a program that runs no candidate Python (TRUST.md 1).
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
