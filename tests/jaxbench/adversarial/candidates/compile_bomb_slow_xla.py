# expect: compile_error compile_timeout | runtime_error oom
# A compile bomb under the caps: 10,000 unrolled select/reverse steps, ~30,000 operations (under
# MAX_OPS) and no FLOP outside the kernel (comparisons, selections and reversals are free), that
# XLA:CPU takes many minutes to compile. Only the compile limit stops it: the candidate's
# compile_error (compile_timeout), never an infrastructure failure retried on the next worker.
from jax import lax

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    y = x
    for _ in range(10_000):
        y = lax.select(y > 0, y, y[::-1])
    return rmsnorm(y, scale)
