# expect: rejected no_pallas_call | runtime_error
# Isolation probe: kills its parent, PID 1 of its namespace and every process it can signal.
import os
import signal

for target in (os.getppid(), 1):
    try:
        os.kill(target, signal.SIGKILL)
        print(f"PROBE-KILL sent to {target}", flush=True)
    except OSError as exc:
        print(f"PROBE-KILL {target}: {type(exc).__name__}", flush=True)
try:
    os.kill(-1, signal.SIGKILL)
    print("PROBE-KILL sent to -1", flush=True)
except OSError as exc:
    print(f"PROBE-KILL -1: {type(exc).__name__}", flush=True)


def workload(x, scale):
    return x * scale
