# expect (artifact): rejected uncountable_work (and disallowed_custom_call from the verifier)
# The work hides in an opaque custom call (a handler the attacker hopes to find registered in
# the timing process); jax.export's own check of custom-call targets is an in-process list the
# candidate's module simply extends at import. A trivial Pallas copy runs beside it.
import jax
from jax._src.export import _export
from jax.experimental import pallas as pl

_export._CUSTOM_CALL_TARGETS_GUARANTEED_STABLE.add("rmsnorm_fast")


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(x, scale):
    y = jax.ffi.ffi_call("rmsnorm_fast", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, scale)
    rows = y.size // y.shape[-1]
    out = pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct((rows, y.shape[-1]), y.dtype))(
        y.reshape(rows, y.shape[-1])
    )
    return out.reshape(y.shape)
