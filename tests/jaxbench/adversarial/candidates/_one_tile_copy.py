# The costume of the attacks that do their work outside the profiled program: what the harness
# compiles and times is a Pallas copy of one (8, 128) tile of x, almost free; the attack hands
# back the real answer from elsewhere. Inlined on upload (see _honest_rmsnorm.py).
import jax
from jax.experimental import pallas as pl


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _one_tile_copy(x):
    tile = x.reshape(-1, x.shape[-1])[:8, :128]
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct(tile.shape, x.dtype))(tile)
