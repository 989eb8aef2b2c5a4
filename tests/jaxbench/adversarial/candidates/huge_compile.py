# expect: timeout compile | compile_error | runtime_error oom
# A huge compile: a Python loop unrolls a million operations around a real kernel. Tracing it
# in the export child ends at its time limit or, on a machine fast enough to get there first,
# at its memory limit (4 GiB: tracing needs far less); either way nothing of it is measured.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl



def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    y = x
    for i in range(1_000_000):
        y = y * 1.0000001 + 0.0
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype))(y * scale)
