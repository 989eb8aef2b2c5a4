# expect: runtime_error | incorrect shape_mismatch
"""Returns an enormous output: a 1 GiB bfloat16 array (the expected output is 512 KiB).

The child writes every output as .npy before the trusted side reads its description. Defence:
the child's file-size limit (RLIMIT_FSIZE, sized from the largest expected output), its memory
limit, and the trusted side's read caps (an output file is read with a cap computed from the
expected shape, never whole). Either the write fails in the child (``runtime_error``) or the
shape claim is refused (``incorrect shape_mismatch``); nothing large reaches the trusted side.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}


def _kernel(x_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.sum(x * x, axis=-1, keepdims=True) * (1.0 / x.shape[-1]) + eps)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...]


def rmsnorm(x, scale):
    """An honest row-blocked Pallas RMSNorm (as tests/harness/candidates/correct_rmsnorm.py)."""
    *lead, e = x.shape
    rows = x.size // e
    block = 256 if rows % 256 == 0 else rows
    out = pl.pallas_call(
        functools.partial(_kernel, eps=float(CONFIG["epsilon"])),
        out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype), grid=(rows // block,),
        in_specs=[pl.BlockSpec((block, e), lambda i: (i, 0)),
                  pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)


def _the_job():
    """The child's Job object (the harness's own code runs as __main__ in this process)."""
    import gc
    import sys
    main = sys.modules["__main__"]
    for o in gc.get_objects():
        if type(o).__name__ == "Job" and type(o).__module__ == main.__name__:
            return o
    raise RuntimeError("no Job found")


def workload(x, scale):
    y = rmsnorm(x, scale)
    return jnp.broadcast_to(y[..., None], y.shape + (4096,))
