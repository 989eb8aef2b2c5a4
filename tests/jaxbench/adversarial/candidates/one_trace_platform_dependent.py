# expect: rejected no_pallas_call | rejected returns_input | incorrect
"""Chooses by platform at lowering time with JAX's own ``lax.platform_dependent``: plain XLA
when lowered for the cpu, a Pallas copy when lowered for a TPU. One trace holds both branches;
two lowerings of it (one for the timed cpu program, one for the share) would each take their
own branch.

What the defence gives: ``rejected no_pallas_call``. Only the TPU lowering exists (the judged
program, timed on the cpu as its twin), and in it the kernel sits in a branch of the platform
switch: no kernel runs unconditionally. Were it to pass that rule, the copy is what would run.
"""
import jax

from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py
from ._wrong_or_xla import _copy_kernel, _xla  # inlined on upload: see _wrong_or_xla.py


def workload(x, scale):
    return jax.lax.platform_dependent(
        x, scale, cpu=_xla, default=lambda x, scale: _row_blocked(_copy_kernel, x, scale)
    )
