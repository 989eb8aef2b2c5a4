# expect: rejected host_callback
"""Work outside the profiled program through ``io_callback`` (ordered): the host computes the
answer with numpy and a Pallas copy passes it on. Defence: the traced program's primitives and
its lowered text are scanned for host callbacks: ``rejected host_callback``."""
import jax
from jax.experimental import pallas as pl

import numpy as np  # noqa: E402
from jax.experimental import io_callback  # noqa: E402


def _host(x, scale):
    xf = np.asarray(x, np.float32)
    y = (xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)).astype(x.dtype)
    return (y.astype(np.float32) * np.asarray(scale, np.float32)).astype(x.dtype)


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    y = io_callback(_host, jax.ShapeDtypeStruct(x.shape, x.dtype), x, scale, ordered=True)
    b, s, e = x.shape
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct((b * s, e), x.dtype))(
        y.reshape(b * s, e)).reshape(x.shape)
