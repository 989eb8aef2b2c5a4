# expect: rejected artifact_mismatch | rejected no_pallas_call
"""Forges the artifact in the writer itself: replaces the export child's artifact writer so
that the judged program it writes is a plain-XLA RMSNorm exported by the attack (with its own
size and digest, so the trusted side's check of the bytes passes), while the trace was a Pallas
kernel.

What the defence gives: ``rejected``. Whatever bytes the candidate's process hands over are one
artifact, judged and timed alike: here the traced kernel's interpreted program belongs to no
kernel site of the forged program (``artifact_mismatch``); a forger that left the kernels out
too would hand over a program with no kernel (``no_pallas_call``).
"""
import sys

import jax

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py
from ._wrong_or_xla import _xla  # inlined on upload: see _wrong_or_xla.py

_MAIN = sys.modules["__main__"]
_real_write = _MAIN._write_artifact


def _forging_write(out_dir, name, data):
    if name == "program.jaxexport":
        specs = _MAIN.input_specs(_MAIN.json.load(open(_MAIN.OPTS["in"] + "/manifest.json")))
        data = jax.export.export(jax.jit(_xla), platforms=["tpu"])(*specs).serialize()
    return _real_write(out_dir, name, data)


_MAIN._write_artifact = _forging_write


def workload(x, scale):
    return rmsnorm(x, scale)
