# expect: correct_slower
"""Guard steal: processes left behind to slow the baseline's clean re-measurement.

At import it leaves two detached processes (double fork, new session) that spin on the CPU for
ten minutes. Before the two-process harness the baseline guard re-measured the baseline alone
on the candidate's core while such processes were still alive, so an inflated pairing could be
confirmed (9x from an honest 0.06x kernel).

What the defence gives: ``correct_slower``: this file runs only in the export child; every
process of it (the PID namespace and its cgroup) is dead before the timer child starts, and the
harness checks that it is (``SandboxedChild.dead``) before anything is timed.
"""
import os
import sys

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py

for _ in range(2):
    try:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time\nend = time.time() + 600\nwhile time.time() < end: pass", "JXB-GUARD-STEAL"])
            os._exit(0)
    except OSError:
        pass


def workload(x, scale):
    return rmsnorm(x, scale)
