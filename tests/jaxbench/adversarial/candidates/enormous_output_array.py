# expect: runtime_error | incorrect shape_mismatch
"""Returns an enormous output: a 1 GiB bfloat16 array (the expected output is 512 KiB).

The child writes every output as .npy before the trusted side reads its description. Defence:
the child's file-size limit (RLIMIT_FSIZE, sized from the largest expected output), its memory
limit, and the trusted side's read caps (an output file is read with a cap computed from the
expected shape, never whole). Either the write fails in the child (``runtime_error``) or the
shape claim is refused (``incorrect shape_mismatch``); nothing large reaches the trusted side.
"""
import jax.numpy as jnp

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


def workload(x, scale):
    y = rmsnorm(x, scale)
    return jnp.broadcast_to(y[..., None], y.shape + (4096,))
