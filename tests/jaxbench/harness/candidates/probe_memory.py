# expect: compile_error import_error | runtime_error oom
# Isolation probe: asks for 100 GB at once, then grows a buffer page by page.
import numpy as np

try:
    big = np.ones(100 * 2**30, dtype=np.uint8)
    print("PROBE-MEM 100GB allocated", flush=True)
except MemoryError:
    print("PROBE-MEM 100GB refused", flush=True)
chunks = []
for _ in range(400):                       # up to 100 GB in 256 MB touched chunks
    chunks.append(np.ones(256 * 2**20, dtype=np.uint8))
print(f"PROBE-MEM grew to {len(chunks) * 256} MB", flush=True)


def workload(x, scale):
    return x
