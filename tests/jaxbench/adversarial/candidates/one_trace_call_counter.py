# expect: rejected no_pallas_call
"""Counts its own calls: the first trace (the timed cpu program, when the export child traced
it first) gets plain XLA, every later one (the TPU export for the share) a Pallas copy.

What the defence gives: ``rejected no_pallas_call``. ``workload`` is called once; the program it
traced, plain XLA, is the program judged and timed, and it has no kernel.
"""
from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py
from ._wrong_or_xla import _copy_kernel, _xla  # inlined on upload: see _wrong_or_xla.py

_CALLS = [0]


def workload(x, scale):
    _CALLS[0] += 1
    if _CALLS[0] == 1:
        return _xla(x, scale)
    return _row_blocked(_copy_kernel, x, scale)
