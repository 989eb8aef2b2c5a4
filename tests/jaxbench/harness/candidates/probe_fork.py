# expect: rejected no_pallas_call
# Isolation probe: a fork bomb (every child sleeps); the pids limit stops it, the harness
# kills the rest.
import os
import time

n = 0
err = None
for _ in range(100000):
    try:
        pid = os.fork()
    except OSError as exc:
        err = type(exc).__name__
        break
    if pid == 0:
        time.sleep(3600)
        os._exit(0)
    n += 1
print(f"PROBE-FORK forked={n} stopped_by={err}", flush=True)


def workload(x, scale):
    return x * scale
