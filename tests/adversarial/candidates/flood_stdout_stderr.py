# expect: correct_slower
"""Floods stdout and stderr for its whole life, from a background thread and from every call.

A daemon thread writes 64 KiB chunks to fds 1 and 2 without pause (raw ``os.write``, no Python
buffering), and every traced call prints too. Defence: the harness drains both streams in its
own threads and keeps a capped head and tail of each (the record stays small), the child's
status channel is a separate fd, and the file-size and output caps stay in force. The kernel
itself is honest: ``correct_slower``.
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


import os  # noqa: E402
import threading  # noqa: E402

_CHUNK = (b"JXB-FLOOD " * 6554)[:65536]


def _flood():
    while True:
        for fd in (1, 2):
            try:
                os.write(fd, _CHUNK)
            except OSError:
                pass


threading.Thread(target=_flood, daemon=True).start()


def workload(x, scale):
    print("JXB-FLOOD tracing " * 1000, flush=True)
    return rmsnorm(x, scale)
