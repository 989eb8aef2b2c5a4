# expect: correct_slower | correct_tie
"""Inflates the baseline by touching its program by name: far beyond the guard.

The baseline is compiled in this child (before the candidate is imported) from the trusted
side's exported program, under a harness-chosen name the job carries. At import this candidate
replaces the job's compiled baseline with a program compiled under the SAME name that runs the
baseline plus a 512x512 float32 matmul chain (~20x its time), so the side-by-side baseline looks
far slower and the candidate far faster. Its own kernel is honest (on the CPU target ~0.02x).

Defence: the baseline timed beside the candidate is compared with the same exported program
timed alone in a clean child (``baseline_guard``); far slower, the clean measurement is taken
again and the interval covers both, held for review. A correct defence never lets it come out
faster: ``correct_slower``, or ``correct_tie`` when the interval covering both estimates
reaches 1 (the inflated side-by-side point then gains nothing).
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


import sys  # noqa: E402

_JOB = _the_job()
_MAIN = sys.modules["__main__"]


def _swap_baseline():
    name = _JOB.spec["baseline_name"]
    with open(_JOB.in_root + "/baseline.jaxexport", "rb") as f:
        exported = jax.export.deserialize(bytearray(f.read()))

    def slow(x, scale):
        out = exported.call(x, scale)
        m = x.reshape(-1, x.shape[-1])[:512, :512].astype(jnp.float32)
        for _ in range(4):
            m = jnp.tanh(m @ m)
        return out + (0 * m[0, 0]).astype(out.dtype)

    specs = _MAIN.input_specs(_JOB.manifest)
    _JOB.baseline = jax.jit(_JOB.named(slow, name)).lower(*specs).compile()


_swap_baseline()


def workload(x, scale):
    return rmsnorm(x, scale)
