# expect: correct_slower
"""Check-index leak: learn which timed calls are checked, corrupt the others.

The old timing command told the candidate's own process which timed calls would have their
outputs checked. This file wraps every command reader it can find in its process (``sys.stdin``
and any module-level ``recv``) to capture a ``save_iters`` list, and replaces any ``Job.timing``
of the process it runs in so that unchecked timed calls return an all-zero output instead of
running the kernel.

What the defence gives: ``correct_slower`` (the honest kernel's verdict): this file runs only in
the export child, which never receives a timing command; the timer child, which times, never
runs candidate Python; and it hashes every timed output against the checked output of the same
inputs, so no index of checked calls exists anywhere.
"""
import sys

import jax.numpy as jnp

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py

LEARNED = {"checked": None}
main = sys.modules.get("__main__")
real_recv = getattr(main, "recv", None)
if callable(real_recv):

    def recv():
        cmd = real_recv()
        if isinstance(cmd, dict) and "save_iters" in cmd:
            LEARNED["checked"] = set(cmd["save_iters"])
        return cmd

    main.recv = recv
job_cls = getattr(main, "Job", None)
if job_cls is not None and hasattr(job_cls, "timing"):
    real_timing = job_cls.timing

    def timing(self, *a, **k):
        if LEARNED["checked"] is not None:
            self.compiled = lambda x, s: jnp.zeros_like(x)
        return real_timing(self, *a, **k)

    job_cls.timing = timing


def workload(x, scale):
    return rmsnorm(x, scale)
