# expect: correct_faster | correct_tie | correct_slower
# NOT DEFENDED: the expectation records the gap (see /docs/#trust); a defence must change it to rejected
"""Forged timed outputs: the timed calls compute nothing, the saved outputs are recomputed.

For the timing phase only, the candidate's compiled program is swapped for one that returns
zeros, compiled under the SAME harness-chosen name (50 executions of ``jit_<name>`` in the
trace, each almost free). The child's ``write_outputs`` (the harness's code, ``__main__`` in
this process) is patched: the outputs of the saved timed calls, which the trusted side checks,
are recomputed by the real program on the right inputs after the timed loop, outside the
profiled window. Every output the trusted side sees is right; every timed call did nothing.

What a correct defence gives: ``correct_slower`` (the timed program is the checked one, e.g.
the candidate's program exported and run in a child without candidate code) or ``rejected``.
NOT DEFENDED while outputs and timings are written by the candidate's own process (TRUST.md 1).
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
_real_timing = type(_JOB).timing
_real_write = _MAIN.write_outputs
_state = {}


def _zeros(x, scale):
    return jnp.zeros_like(x)


def _write_outputs(tag, out):
    if tag.startswith("t") and "real" in _state:
        i = int(tag[1:])
        sids = _state["sets"]
        args = _MAIN.load_set(_JOB.manifest, sids[i % len(sids)], _JOB.in_root)
        out = _state["real"](*args)
    return _real_write(tag, out)


def _timing(self, set_ids, *args, **kw):
    _state["real"], _state["sets"] = self.compiled, list(set_ids)
    self.compiled = jax.jit(self.named(_zeros)).lower(*_MAIN.input_specs(self.manifest)).compile()
    try:
        return _real_timing(self, set_ids, *args, **kw)
    finally:
        self.compiled = _state["real"]


type(_JOB).timing = _timing
_MAIN.write_outputs = _write_outputs


def workload(x, scale):
    return rmsnorm(x, scale)
