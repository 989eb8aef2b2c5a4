# expect: rejected no_pallas_call
# Probe: reads /proc/1/environ and the parent's environ for secrets.
import jax.numpy as jnp

leaks = {}
for pid in ("1", "self", str(__import__("os").getppid())):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            leaks[pid] = f.read().decode(errors="replace")
    except OSError as exc:
        leaks[pid] = type(exc).__name__
print("PROBE-PROC-ENVIRON", leaks, flush=True)


def workload(x, scale):
    return x
