# expect: compile_error trace_error | incorrect | rejected
# Returns an unfinished asynchronous value (a Future) instead of an array.
import concurrent.futures

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


_POOL = concurrent.futures.ThreadPoolExecutor(1)


def workload(x, scale):
    return _POOL.submit(rmsnorm, x, scale)
