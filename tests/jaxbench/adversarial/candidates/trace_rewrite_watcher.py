# expect: correct_slower
"""Trace edits: a watcher left behind to rewrite the profiler trace once it is written.

At import it starts a detached process (double fork, new session) that looks, for ten minutes,
for any ``*.xplane.pb`` under the directories a child can see and rewrites every duration in it
to a chosen tiny value, and a thread that does the same in this process. Before the two-process
harness the trace was written by the process that ran this file, so such an edit gave any
speedup it liked with a tight interval.

What the defence gives: the honest kernel's own verdict, ``correct_slower``: this file runs only
in the export child, which writes no trace and is dead (every process of it killed) before the
timer child, which never runs candidate code, writes its trace in its own sandbox.
"""
import os
import sys
import threading
import time

from ._honest_rmsnorm import CONFIG, rmsnorm  # inlined on upload: see _honest_rmsnorm.py

_WATCH = r'''
import os, time
end = time.time() + 600
while time.time() < end:
    for root in ("/", "/tmp", os.getcwd()):
        for d, _dirs, names in os.walk(root):
            for n in names:
                if n.endswith(".xplane.pb"):
                    try:
                        p = os.path.join(d, n)
                        data = bytearray(open(p, "rb").read())
                        open(p, "wb").write(bytes(len(data)))
                    except OSError:
                        pass
    time.sleep(0.05)
'''


def _spawn():
    try:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", _WATCH])
            os._exit(0)
    except OSError:
        pass


_spawn()
threading.Thread(target=lambda: exec(_WATCH, {}), daemon=True).start()
time.sleep(0.1)


def workload(x, scale):
    return rmsnorm(x, scale)
