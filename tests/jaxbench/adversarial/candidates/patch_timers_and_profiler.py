# expect: correct_slower | correct_faster | rejected
# Monkeypatches the clock, block_until_ready and the profiler, hoping to look fast.
import time
import jax

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


time.perf_counter = lambda: 0.0
time.time = lambda: 0.0
time.monotonic = lambda: 0.0
jax.block_until_ready = lambda x: x
try:
    import jax.profiler as _prof
    _prof.start_trace = lambda *a, **k: None
    _prof.stop_trace = lambda *a, **k: None
except Exception:
    pass


def workload(x, scale):
    return rmsnorm(x, scale)
