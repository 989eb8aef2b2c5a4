# expect: rejected work_outside_pallas | rejected no_pallas_call
"""A second kernel beside plain XLA: the answer is computed in XLA and an unrelated Pallas copy
runs beside it, its result folded in as a zero, so the program "has a pallas_call".

What the defence gives: ``rejected``. The Pallas share is counted on the one judged program,
whose timed work is the XLA RMSNorm: all of the workload's FLOPs run outside Pallas.
"""
from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py
from ._wrong_or_xla import _copy_kernel, _xla  # inlined on upload: see _wrong_or_xla.py


def workload(x, scale):
    beside = _row_blocked(_copy_kernel, x, scale)
    return _xla(x, scale) + 0 * beside
