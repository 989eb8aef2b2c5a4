# expect: rejected no_pallas_call
# Isolation probe: writes 2 GiB to stdout (the harness keeps a capped head and tail).
import sys

chunk = b"x" * (1 << 20)
for _ in range(2048):
    sys.stdout.buffer.write(chunk)
sys.stdout.buffer.flush()
print("PROBE-PRINT done", flush=True)


def workload(x, scale):
    return x * scale
