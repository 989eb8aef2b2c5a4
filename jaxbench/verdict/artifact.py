"""Verifying a candidate's exported program before it is compiled and run (trusted side, pure,
standard library only).

The export child (which runs the candidate's Python) hands over a serialized ``jax.export``
artifact; the timer child deserializes it and reports its facts
(``jaxbench/profiling/hlo_cost.artifact_facts``); :func:`verify` decides from those facts
whether the artifact may run at all. What is checked:

* its signature: exactly the expected input and output avals (shape and dtype, in order);
* its custom calls: only targets of the platform's allowlist (:data:`ALLOWED_CUSTOM_CALLS`):
  Pallas kernels of that platform and the FLOP-free bookkeeping calls JAX emits. On the CPU
  target no kernel target is allowed: the export child lowers Pallas kernels through the
  interpreter, into plain HLO loops;
* no host callbacks (``io_callback``/``pure_callback`` targets, host send/recv);
* its size (:data:`MAX_MODULE_BYTES`) and its number of operations (:data:`MAX_OPS`), before
  anything compiles it (a small upload must not buy minutes of compilation), one device, no
  ordered effects, no sharding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

# What an honest program weighs, measured (``benchmarks/compile_bomb.py --honest``: every example,
# expert and JAX-candidate kernel exported as the export child does, described by
# ``hlo_cost.facts_from_bytes``; jax 0.10.2):
#   module bytes: 3-51 KB at the small profile; 478 KB the largest at the full profile (expert 6p,
#     paged attention, TPU: its Mosaic kernel's payload), every other one under 120 KB;
#   operations (``facts["ops"]``: every operation of the module, those in loop bodies, branches and
#     other regions included; a Mosaic/Triton kernel's body is payload, not operations): 3,359 the
#     largest (expert 6p on the cpu target, its kernels interpreted into plain HLO), 1,106 the next;
#     on TPU/GPU at most 433 (expert 11p). (At the full profile, which the cpu target never runs,
#     expert 6p interpreted has 47,638 operations: its XLA:CPU compile alone takes 76 s.)
# The caps sit far above both (bytes 17x, operations 30x) and below what costs minutes: the timer
# describes a densely packed module at ~4.5 us a byte (100,000 operations, ~1 MB: ~5 s; 400,000,
# ~4 MB: ~18 s) before the trusted side sees a figure, and XLA:CPU compiles 100,000 unrolled
# elementwise operations in ~4 s. Few operations can still compile for ever (calls XLA inlines,
# doubling at each level): whatever passes both caps is bounded by the compile limit
# (``harness/settings.py`` DEFAULT_TIMEOUTS), whose overrun is the candidate's compile_error.
# The bombs' figures: ``benchmarks/compile_bomb.py``.
MAX_MODULE_BYTES = 8 * 1024 * 1024  # a serialized module above this is refused unread
MAX_OPS = 100_000  # a module of more operations is refused before it is compiled
# what hlo_cost.py says of a module too large or too deep for it to count (its own cap, 2,000,000)
_TOO_LARGE_TO_READ = "too large or too deep"

# FLOP-free bookkeeping JAX emits on any platform (sharding annotations, lax.empty)
_BOOKKEEPING = frozenset(
    (
        "Sharding",
        "SPMDFullToShardShape",
        "SPMDShardToFullShape",
        "annotate_device_placement",
        "AllocateBuffer",
    )
)
TPU_KERNELS = frozenset(("tpu_custom_call",))
GPU_KERNELS = frozenset(
    ("__gpu$xla.gpu.triton", "triton_kernel_call", "triton_kernel_call_ffi", "mosaic_gpu", "mosaic_gpu_v2")
)
ALLOWED_CUSTOM_CALLS: dict[str, frozenset[str]] = {
    "cpu": _BOOKKEEPING,
    "tpu": _BOOKKEEPING | TPU_KERNELS,
    "cuda": _BOOKKEEPING | GPU_KERNELS,
    "rocm": _BOOKKEEPING | GPU_KERNELS,
    "gpu": _BOOKKEEPING | GPU_KERNELS,
}


def _norm_aval(item: object) -> tuple[tuple[Any, ...], str] | None:
    """(shape, dtype) of one expected/actual aval: a dict with "shape" and "dtype", a pair in
    either order ((shape, dtype) as the facts write it, (dtype, shape) as prepare does), or an
    object with ``shape`` and ``dtype`` (a ShapeDtypeStruct)."""
    if isinstance(item, dict):
        shape, dtype = item.get("shape"), item.get("dtype")
    elif isinstance(item, (list, tuple)) and len(item) == 2:
        a, b = item
        shape, dtype = (b, a) if isinstance(a, str) else (a, b)
    elif hasattr(item, "shape") and hasattr(item, "dtype"):  # a ShapeDtypeStruct or an array
        shape = item.shape
        dtype = getattr(item.dtype, "name", None) or str(item.dtype)
    else:
        return None
    if not isinstance(dtype, str) or not isinstance(shape, (list, tuple)):
        return None
    return tuple(shape), dtype


def _fmt(aval: tuple[tuple[Any, ...], str]) -> str:
    shape, dtype = aval
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def _signature(kind: str, got: object, expected: Sequence[object]) -> str | None:
    exp = [_norm_aval(e) for e in expected]
    if any(e is None for e in exp):
        raise ValueError(f"malformed expected {kind} avals: {expected!r}")
    if not isinstance(got, list):
        return f"the program declares no {kind}s"
    act = [_norm_aval(g) for g in got]
    if len(act) != len(exp):
        return (
            f"the program takes {len(act)} {kind}s, the workload has {len(exp)}"
            if kind == "input"
            else (f"the program returns {len(act)} {kind}s, the workload expects {len(exp)}")
        )
    for k, (a, e) in enumerate(zip(act, exp)):
        assert e is not None
        if a is None:
            return f"{kind} {k} is unreadable"
        if a != e:
            return f"{kind} {k} is {_fmt(a)}, the workload's is {_fmt(e)}"
    return None


def _names(v: object) -> Iterable[str]:
    if isinstance(v, dict):
        return [str(k) for k in v]
    if isinstance(v, list):
        return [str(k) for k in v]
    return []


def _too_many_ops(facts: dict[str, Any]) -> str | None:
    """Why the module has too many operations to be compiled here, or None."""
    hint = "avoid unrolling loops in Python (use lax.fori_loop / lax.scan without unroll, or a kernel's grid)"
    if any(_TOO_LARGE_TO_READ in str(r) for r in facts.get("uncountable") or []):
        return f"the exported program is too large or nested too deep to be read, above the {MAX_OPS:,}-operation limit; {hint}"
    ops = facts.get("ops")
    if isinstance(ops, int) and not isinstance(ops, bool) and ops > MAX_OPS:
        return f"the exported program has {ops:,} operations, above the {MAX_OPS:,}-operation limit; {hint}"
    return None


def verify(
    facts: object, expected_in: Sequence[object], expected_out: Sequence[object], platform: str
) -> tuple[str, str] | None:
    """None when the artifact may run on ``platform``, else (category, message).

    ``facts``: ``hlo_cost.artifact_facts`` of the deserialized artifact; ``expected_in`` /
    ``expected_out``: the workload's avals in order, each a dict with "shape" and "dtype", a
    (shape, dtype) / (dtype, shape) pair or a ShapeDtypeStruct. Categories, in the order checked:

    * ``artifact_unreadable``: no facts, or an artifact that could not be parsed;
    * ``artifact_too_large``: a serialized module above :data:`MAX_MODULE_BYTES`, or of more
      than :data:`MAX_OPS` operations (or too many, or nested too deep, to be counted at all);
    * ``wrong_platform``: not exported for ``platform`` alone (a multi-platform artifact
      dispatches on a platform index: its kernels would all sit in branches);
    * ``signature_mismatch``: inputs or outputs differ in number, shape or dtype;
    * ``multi_device``: more than one device, or inputs/outputs sharded;
    * ``ordered_effects``: side effects that impose an order (io_callback and friends);
    * ``host_callback``: a call back into Python or the host;
    * ``disallowed_custom_call``: a custom call outside the platform's allowlist.
    """
    if not isinstance(facts, dict) or not facts.get("platforms"):
        return "artifact_unreadable", "the exported program could not be read"
    size = facts.get("module_bytes")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "artifact_unreadable", "the exported program's size is unknown"
    if size > MAX_MODULE_BYTES:
        return "artifact_too_large", (
            f"the exported program is {size / 2**20:.1f} MiB, above the {MAX_MODULE_BYTES / 2**20:.0f} MiB "
            "limit; avoid unrolling loops or closing over large constants"
        )
    too_large = _too_many_ops(facts)
    if too_large:
        return "artifact_too_large", too_large
    unparsed = [
        r for r in facts.get("uncountable") or [] if "could not be parsed" in str(r) or "could not be read" in str(r)
    ]
    if unparsed and not facts.get("ops"):
        return "artifact_unreadable", f"the exported program could not be read: {str(unparsed[0])[:200]}"
    platforms = [str(p) for p in facts.get("platforms") or []]
    if platforms != [platform]:
        return "wrong_platform", f"the program was exported for {', '.join(platforms)}, not {platform}"
    bad = _signature("input", facts.get("in_avals"), expected_in) or _signature(
        "output", facts.get("out_avals"), expected_out
    )
    if bad:
        return "signature_mismatch", bad + " (workload(*inputs) must keep the workload's signature)"
    if facts.get("nr_devices") != 1 or facts.get("nontrivial_shardings"):
        return "multi_device", (
            f"the program is exported for {facts.get('nr_devices')} devices"
            + (" with sharded inputs or outputs" if facts.get("nontrivial_shardings") else "")
            + "; a candidate runs on one device, unsharded"
        )
    if facts.get("ordered_effects"):
        effects = ", ".join(str(e)[:80] for e in facts["ordered_effects"][:3])
        return (
            "ordered_effects",
            f"the program has ordered side effects ({effects}); remove io_callback and debug prints",
        )
    callbacks = list(_names(facts.get("host_callbacks")))
    if callbacks:
        return "host_callback", (
            "the program calls back into the host (" + ", ".join(c[:80] for c in callbacks[:5]) + "); "
            "pure_callback, io_callback, jax.debug and host transfers are not allowed"
        )
    allowed = ALLOWED_CUSTOM_CALLS.get(platform)
    if allowed is None:
        return "wrong_platform", f"no custom-call allowlist for platform {platform!r}"
    calls = facts.get("custom_calls")
    if not isinstance(calls, dict):
        return "artifact_unreadable", "the exported program's custom calls are unknown"
    disallowed = sorted(str(t) for t in calls if str(t) not in allowed)
    if disallowed:
        hint = (
            "on this platform Pallas kernels are lowered by the interpreter, so no kernel custom call may remain"
            if platform == "cpu"
            else "only Pallas kernels of this platform and JAX's sharding annotations are allowed"
        )
        return "disallowed_custom_call", (
            "the program makes custom calls to " + ", ".join(repr(t[:80]) for t in disallowed[:5]) + f"; {hint}"
        )
    return None


SUMMARY_KEYS = ("platforms", "module_bytes", "custom_calls", "kernels", "outside_flops", "uncountable", "ops")


def summary(facts: object) -> dict[str, Any]:
    """What an evaluation record keeps of an artifact's facts (``EvalRecord["artifact"]``)."""
    if not isinstance(facts, dict):
        return {}
    return {k: facts.get(k) for k in SUMMARY_KEYS}


def output_dtype_differences(got: object, expected: Sequence[object]) -> tuple[list[object], list[str]]:
    """For the TPU pre-check, which asks whether a program lowers, not whether it is right: the
    expected outputs with the program's own dtype wherever an output differs from the workload's
    in dtype alone, and a sentence for each such output. The evaluation still judges those
    outputs (TRUST.md 3: exact dtype): the sentence says so."""
    exp = [_norm_aval(e) for e in expected]
    act = [_norm_aval(g) for g in got] if isinstance(got, list) else []
    if len(act) != len(exp):
        return list(expected), []
    relaxed: list[object] = []
    notes: list[str] = []
    for k, (a, e) in enumerate(zip(act, exp)):
        if a is not None and e is not None and a[0] == e[0] and a[1] != e[1]:
            relaxed.append((a[0], a[1]))
            notes.append(
                f"output {k} is {_fmt(a)}, the workload's is {_fmt(e)}: an evaluation judges it incorrect "
                f"(dtype_mismatch); cast it to {e[1]}"
            )
        else:
            relaxed.append(expected[k])
    return relaxed, notes
