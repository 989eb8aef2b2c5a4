# expect: incorrect structure_mismatch | runtime_error
"""Returns an enormous pytree: the right output plus 5,000 scalar leaves.

Each leaf becomes a file and a line of the child's description (about 0.6 MB of JSON per input set). Defence:
the status line is capped (8 MiB), the structure is compared with the reference's treedef
before any output file is read: ``incorrect structure_mismatch``.
"""
from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    y = rmsnorm(x, scale)
    return (y, (y[0, 0, 0],) * 5000)
