# expect: rejected no_pallas_call
# Isolation probe: leaves a process spinning forever behind (the harness must kill it).
import os

if os.fork() == 0:
    while True:
        pass
print("PROBE-SPIN started", flush=True)


def workload(x, scale):
    return x * scale
