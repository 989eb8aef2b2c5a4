# expect: rejected artifact_too_large | compile_error compile_timeout
# A compile bomb by size: a 1 KB upload whose Python loop unrolls 30,000 elementwise steps, an
# exported program of ~120,000 operations (an honest one has at most ~3,400). The trusted side
# refuses it from the timer's count of its operations, before anything compiles it or walks it
# (verdict/artifact.py MAX_OPS); on a machine too slow to export it within the compile limit (it
# takes ~7 s of the 15 s on a 2-core EPYC VM) it is compile_timeout.
from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    y = x
    for _ in range(30_000):
        y = y * 1.0001 + 0.5
    return rmsnorm(y, scale)
