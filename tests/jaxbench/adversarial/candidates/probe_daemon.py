# expect: rejected no_pallas_call
# Probe: leaves a daemon behind (double fork, new session) that would outlive the evaluation.
import os, sys
import jax.numpy as jnp

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "JXB-DAEMON-MARKER"])
    os._exit(0)


def workload(x, scale):
    return x
