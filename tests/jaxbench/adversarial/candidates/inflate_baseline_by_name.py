# expect: compile_error import_error
"""Inflates the baseline by touching its program by name: far beyond the guard.

The baseline is compiled in this child (before the candidate is imported) from the trusted
side's exported program, under a harness-chosen name the job carries. At import this candidate
replaces the job's compiled baseline with a program compiled under the SAME name that runs the
baseline plus a 512x512 float32 matmul chain (~20x its time), so the side-by-side baseline looks
far slower and the candidate far faster. Its own kernel is honest (on the CPU target ~0.02x).

Defence: the baseline timed beside the candidate is compared with the same exported program
timed alone in a clean child (``baseline_guard``); far slower, the clean measurement is taken
again and the interval covers both, held for review. A correct defence never lets it come out
faster: ``correct_slower``, or ``correct_tie`` when the interval covering both estimates
reaches 1 (the inflated side-by-side point then gains nothing).

Since the two-process harness the baseline exists only in the timer child, which never runs
candidate Python; in the export child, where this file runs, there is no baseline to replace and
its import fails: ``compile_error import_error``.
"""
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._child_internals import _swap_baseline, _the_job  # inlined on upload: see _child_internals.py

_JOB = _the_job()


def _slow_baseline(baseline):
    def slow(x, scale):
        out = baseline(x, scale)
        m = x.reshape(-1, x.shape[-1])[:512, :512].astype(jnp.float32)
        for _ in range(4):
            m = jnp.tanh(m @ m)
        return out + (0 * m[0, 0]).astype(out.dtype)
    return slow


_swap_baseline(_JOB, _slow_baseline)


def workload(x, scale):
    return rmsnorm(x, scale)
