# expect: rejected returns_input | incorrect
"""Branches on JAX's Pallas interpret flag: XLA where the kernels are interpreted (the cpu
target's timed program, once traced with the flag on), a Pallas copy where they are not (the TPU
export the Pallas share was counted on). With two traces this was timed as XLA and judged as a
kernel.

What the defence gives: the copy kernel's own verdict, ``rejected returns_input`` (or
``incorrect``). The candidate is traced once, for the TPU it is judged for (the flag off); the
timed cpu program is that same program with each kernel interpreted by the timer, so the copy is
what runs.
"""
from jax._src import config as _jcfg

from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py
from ._wrong_or_xla import _copy_kernel, _xla  # inlined on upload: see _wrong_or_xla.py


def workload(x, scale):
    if _jcfg.pallas_tpu_interpret_mode_context_manager.value:
        return _xla(x, scale)
    return _row_blocked(_copy_kernel, x, scale)
