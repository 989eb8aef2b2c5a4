# expect: correct_slower
"""Inflates the baseline by touching its program by name: ~2x, inside the guard's margin.

As inflate_baseline_by_name.py, but the replacement (compiled under the baseline's own
harness-chosen name) runs the exported baseline twice, chained, so the side-by-side baseline
takes about twice its time: below the guard's limit on the CPU target (2.5x the baseline timed
alone in a clean child), so the pairing is trusted and the reported speedup is about doubled.

NOT DEFENDED beyond the guard's margin: an inflation below the limit is indistinguishable from
the load the limit allows for. On the CPU target the honest interpret-mode kernel stays far
slower either way (the outcome stays ``correct_slower``, the speedup figure is inflated); a
kernel near parity would be lifted from a tie to ``correct_faster``. The structural fix is to
time the baseline beside a program that runs no candidate Python (TRUST.md 1).
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

    def twice(x, scale):
        first = exported.call(x, scale)
        return exported.call(x + (first[:1] * 0).astype(x.dtype), scale)

    specs = _MAIN.input_specs(_JOB.manifest)
    _JOB.baseline = jax.jit(_JOB.named(twice, name)).lower(*specs).compile()


_swap_baseline()


def workload(x, scale):
    return rmsnorm(x, scale)
