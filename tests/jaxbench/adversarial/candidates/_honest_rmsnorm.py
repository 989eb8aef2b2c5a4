# The honest kernel most attacks wrap: a row-blocked Pallas RMSNorm (as
# tests/jaxbench/harness/candidates/correct_rmsnorm.py), so that what an attack changes is only the
# attack; _row_blocked also runs the attacks' own wrong kernels. Not a candidate and never
# imported: an attack names it with a one-line `from ._honest_rmsnorm import ...`, and the
# corpus loader (tests/jaxbench/adversarial/corpus.py) puts this text in that line's place, so
# every uploaded attack is one self-contained file.
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}
# bound here, at import: an attack that poisons jax.lax.rsqrt later in its file (the warm-child
# state attack) leaves its own honest kernel working
_rsqrt = jax.lax.rsqrt


def _kernel(x_ref, s_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    inv = _rsqrt(jnp.sum(x * x, axis=-1, keepdims=True) * (1.0 / x.shape[-1]) + eps)
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...]


def _row_blocked(kernel, x, scale):
    """``kernel(x_ref, s_ref, o_ref)`` over blocks of rows of ``x`` (scale: one row)."""
    *lead, e = x.shape
    rows = x.size // e
    # 32-row blocks: on the cpu target the interpreted grid keeps the honest kernel clearly
    # slower than XLA (~0.2x), so an attack that made it look faster could not hide in the noise
    block = 32 if rows % 32 == 0 else rows
    out = pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((rows, e), x.dtype), grid=(rows // block,),
        in_specs=[pl.BlockSpec((block, e), lambda i: (i, 0)),
                  pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block, e), lambda i: (i, 0)),
    )(x.reshape(rows, e), scale.reshape(1, e))
    return out.reshape(x.shape)


def rmsnorm(x, scale):
    return _row_blocked(functools.partial(_kernel, eps=float(CONFIG["epsilon"])), x, scale)
