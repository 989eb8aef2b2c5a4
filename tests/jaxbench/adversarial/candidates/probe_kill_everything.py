# expect: rejected no_pallas_call | runtime_error
# Probe: tries to kill the worker that started it (every process it can see).
import os, signal
import jax.numpy as jnp

for pid in range(1, 4096):
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def workload(x, scale):
    return x
