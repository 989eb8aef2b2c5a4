"""Verdict logic (trusted side, pure: numpy and the standard library only).

Everything here takes data the child produced as untrusted claims plus arrays read back with
size and dtype checks, and decides outcomes. The elementwise rule is
:func:`jaxbench.verdict.numerics.exact_rule_report` (the exact float32 answer, XLA's own
error as the allowance, NaN/Inf never pass).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from jaxbench.metrics.roofline import roofline_time
from jaxbench.record import Outcome
from jaxbench.verdict.numerics import exact_rule_report

# floors: a time below floor * slack is physically implausible; the CPU "peaks" are rough
FLOOR_SLACK = {"cpu": 0.02, "tpu": 0.5, "gpu": 0.5}
# top-level names of the portal and harness code a candidate may not import (the harness moved
# from evaluator.bench to jaxbench: both names stay refused)
REFERENCE_MODULES = ("jaxbench", "evaluator", "jaxbench_reference")
# one input set's arrays (inputs or outputs, in pytree-leaf order)
Arrays = Sequence[np.ndarray]


# --------------------------------------------------------------------------- compile errors


def classify_child_error(reply: dict[str, Any], phase: str) -> tuple[str, str, str]:
    """(outcome, error_category, message) for an ``error`` reply of the child."""
    stage = reply.get("stage", "")
    exc = reply.get("exc_type", "")
    msg = _useful_lines(reply.get("message", ""))
    where = reply.get("where") or []
    if where:
        msg = msg + "\n  at " + "\n  at ".join(where)
    if stage == "no_workload":
        return Outcome.REJECTED, "no_workload", "the module defines no callable `workload(*inputs)`"
    if stage == "syntax" or exc in ("SyntaxError", "IndentationError", "TabError"):
        return Outcome.COMPILE_ERROR, "syntax_error", msg
    missing = reply.get("missing_module") or ""
    if stage == "import":
        if missing.split(".")[0] in REFERENCE_MODULES or "jaxbench." in msg or "evaluator.bench" in msg:
            return (
                Outcome.REJECTED,
                "reads_reference",
                f"the candidate tried to import the harness/reference code ({missing or msg}); "
                "it is not available to candidates",
            )
        return Outcome.COMPILE_ERROR, "import_error", msg
    if stage == "trace":
        return Outcome.COMPILE_ERROR, ("pallas_error" if reply.get("pallas") else "trace_error"), msg
    if stage in ("lower", "serialize") and "serialization of host_callbacks" in msg:
        # jax.export refuses a program that calls back into its process: it cannot leave it
        return (
            Outcome.REJECTED,
            "host_callback",
            "the program calls back into the host (pure_callback, io_callback, jax.debug): a callback "
            "cannot leave the process that traced it\n" + msg,
        )
    if stage == "lower":
        if "mosaic" in msg.lower():
            return Outcome.COMPILE_ERROR, "mosaic_error", msg
        return Outcome.COMPILE_ERROR, ("pallas_error" if reply.get("pallas") else "lowering_error"), msg
    if stage == "compile":
        return Outcome.COMPILE_ERROR, "xla_compile_error", msg
    if stage == "serialize":
        # jax.export refuses to serialize a program that calls back into its process
        if "callback" in msg.lower():
            return (
                Outcome.REJECTED,
                "host_callback",
                "the program calls back into the host (a callback cannot leave the process that traced it): " + msg,
            )
        return Outcome.REJECTED, "artifact_unreadable", "the program could not be serialized: " + msg
    if stage == "artifact":
        return Outcome.REJECTED, "artifact_unreadable", "the exported program could not be read: " + msg
    if stage == "interpret":
        # lowered for a TPU, but JAX's generic Pallas interpreter cannot run that kernel
        return Outcome.COMPILE_ERROR, "cpu_unsupported", "cannot run on the cpu target: " + msg
    if stage == "kernels":
        return Outcome.REJECTED, "artifact_too_large", msg
    if stage == "twin":
        # the judged program and its kernels do not make one cpu program (jaxbench/profiling/cpu_twin.py)
        if reply.get("category") == "cpu_unsupported":
            return Outcome.COMPILE_ERROR, "cpu_unsupported", "cannot run on the cpu target: " + msg
        return Outcome.REJECTED, "artifact_mismatch", "the kernels do not fit the judged program: " + msg
    if stage == "execute":
        return Outcome.RUNTIME_ERROR, "exception", msg
    return Outcome.RUNTIME_ERROR, "protocol", f"unexpected child error in {phase}: {msg}"


# the compile side's phases (their limits: harness/settings.py DEFAULT_TIMEOUTS): the export
# child's import, trace and lowering ("compile" in an evaluation, "export" in the pre-check's
# lowering), the timer's reading of the artifact ("load") and its compilation ("compile")
COMPILE_PHASES = frozenset(("compile", "export", "load"))


def timeout_verdict(phase: str) -> tuple[str, str]:
    """(outcome, error_category) of a phase that ran out of time (the child was not at its memory
    limit). A program that does not compile within the limit is the candidate's ``compile_error``
    (``compile_timeout``), like one that does not compile at all: a verdict, never retried, so a
    small upload cannot buy more than the limit's worth of compiling (TRUST.md 8). A run that
    does not finish is a ``timeout`` of its phase."""
    if phase in COMPILE_PHASES:
        return Outcome.COMPILE_ERROR, "compile_timeout"
    return Outcome.TIMEOUT, phase


_EXC_LINE = re.compile(
    r"^\s*([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)|"
    r"jax\.errors\.\w+|[A-Z]\w*Error)\b.*"
)


def _useful_lines(message: str, max_lines: int = 12) -> str:
    """The lines of an exception message that say something: JAX's traceback-filtering notes,
    separators and embedded Python tracebacks are dropped, the exception lines kept (for a
    runtime error inside a callback the real cause is the last of them)."""
    out: list[str] = []
    in_tb = False
    for line in message.splitlines():
        s = line.strip()
        if (
            not s
            or set(s) <= set("-=^~")
            or s.startswith("For simplicity, JAX has removed")
            or s.startswith("The stack trace below excludes")
            or "JAX_TRACEBACK_FILTERING" in s
        ):
            continue
        if "Traceback (most recent call last)" in s:
            head = line.split("Traceback (most recent call last)")[0].rstrip(": ")
            if head.strip() and head not in out:
                out.append(head)
            in_tb = True
            continue
        if in_tb:
            if line.startswith((" ", "\t")) or s.startswith("File "):
                continue
            in_tb = False
        if line not in out:
            out.append(line.rstrip())
    if len(out) > max_lines:
        exc = [l for l in out if _EXC_LINE.match(l)]
        keep = out[:3] + [l for l in exc[-4:] if l not in out[:3]]
        out = keep[:max_lines]
    return "\n".join(out)


# --------------------------------------------------------------------------- the program


# --------------------------------------------------------------------------- outputs


def output_signature_verdict(
    out_tree: object, out_avals: object, ref_treedef: str, expected: list[tuple[str, tuple[int, ...]]]
) -> tuple[str, str, str] | None:
    """Judge the output signature of the candidate's exported program (read by the timer from
    the program itself) against the reference's: None, or (outcome, category, message). A
    program that cannot return the right shape is ``incorrect`` before it runs."""
    if out_tree != ref_treedef:
        return Outcome.INCORRECT, "structure_mismatch", f"output pytree {out_tree!r}, expected {ref_treedef!r}"
    avals = out_avals if isinstance(out_avals, list) else []
    if len(avals) != len(expected):
        return Outcome.INCORRECT, "structure_mismatch", f"{len(avals)} output leaves, expected {len(expected)}"
    for k, (aval, (dt, shape)) in enumerate(zip(avals, expected)):
        got_shape, got_dt = (tuple(aval[0]), aval[1]) if isinstance(aval, list) and len(aval) == 2 else (None, None)
        if got_shape != tuple(shape):
            return Outcome.INCORRECT, "shape_mismatch", f"output {k} has shape {got_shape}, expected {tuple(shape)}"
        if got_dt != dt:
            return Outcome.INCORRECT, "dtype_mismatch", f"output {k} has dtype {got_dt}, expected {dt}"
    return None


def check_claims(meta: object, ref_treedef: str, expected: list[tuple[str, tuple[int, ...]]]) -> tuple[str, str] | None:
    """Check the child's description of one output against the expected structure.
    Returns None or (category, message)."""
    if not isinstance(meta, dict):
        return "structure_mismatch", "no output description"
    if meta.get("treedef") != ref_treedef:
        return "structure_mismatch", (f"output pytree {meta.get('treedef')!r}, expected {ref_treedef!r}")
    leaves = meta.get("leaves") or []
    if len(leaves) != len(expected):
        return "structure_mismatch", f"{len(leaves)} output leaves, expected {len(expected)}"
    for k, (leaf, (dt, shape)) in enumerate(zip(leaves, expected)):
        if not leaf.get("is_jax_array") or not str(leaf.get("type", "")).startswith("jaxlib"):
            return "not_array", f"output {k} is a {leaf.get('type')}, not a concrete jax.Array"
        if leaf.get("dtype") != dt:
            return "dtype_mismatch", f"output {k} has dtype {leaf.get('dtype')}, expected {dt}"
        if tuple(leaf.get("shape") or ()) != tuple(shape):
            return "shape_mismatch", (f"output {k} has shape {tuple(leaf.get('shape') or ())}, expected {tuple(shape)}")
    return None


def merge_errors(acc: dict[str, Any] | None, rep: dict[str, Any]) -> dict[str, Any]:
    """Fold one output's exact-rule report into the running error summary of an evaluation."""
    acc = acc or {
        "candidate": {"max_abs": 0.0, "max_rel": 0.0, "n_beyond_tol": 0},
        "xla": {"max_abs": 0.0, "max_rel": 0.0, "n_beyond_tol": 0},
        "n_fail": 0,
        "worst_excess": 0.0,
        "n_elements": 0,
    }
    for side in ("candidate", "xla"):
        a, r = acc[side], rep[side]
        a["max_abs"] = max(a["max_abs"], r["max_abs"])
        a["max_rel"] = max(a["max_rel"], r["max_rel"])
        a["n_beyond_tol"] += r["n_beyond_tol"]
    acc["n_fail"] += rep["n_fail"]
    acc["worst_excess"] = max(acc["worst_excess"], rep["worst_excess"])
    acc["n_elements"] += rep.get("n_elements", 0)
    return acc


def compare_set(
    exacts: Arrays, xlas: Arrays, cands: Arrays, atol: float, rtol: float
) -> tuple[bool, str | None, dict[str, Any] | None, str]:
    """Compare one input set's outputs under the exact rule (verdict_math.exact_rule_report).
    Returns (ok, category, errors, message); ``errors`` as :func:`merge_errors` builds it."""
    errors: dict[str, Any] | None = None
    failure: tuple[str, str] | None = None
    for k, (e, x, c) in enumerate(zip(exacts, xlas, cands)):
        rep = exact_rule_report(e, x, c, atol, rtol)
        rep["n_elements"] = int(np.asarray(c).size)
        errors = merge_errors(errors, rep)
        if failure is not None:
            continue
        if rep["n_nonfinite"]:
            failure = ("non_finite", f"output {k}: {rep['n_nonfinite']} NaN/Inf values")
        elif not rep["passed"]:
            cr, xr = rep["candidate"], rep["xla"]
            failure = (
                "not_allclose",
                f"output {k}: {rep['n_fail']} of {np.asarray(c).size} elements farther from "
                f"the exact answer than atol={atol:g} + rtol={rtol:g}*|exact| + XLA's own "
                f"error (candidate max abs err {cr['max_abs']:.4g}, XLA's {xr['max_abs']:.4g}; "
                f"worst element {rep['worst_excess']:.3g}x its allowance)",
            )
    if failure:
        return False, failure[0], errors, failure[1]
    return True, None, errors, ""


def _passes(exacts: Arrays, xlas: Arrays, cands: Arrays, atol: float, rtol: float) -> bool:
    return all(
        e.shape == c.shape and exact_rule_report(e, x, c, atol, rtol)["passed"] for e, x, c in zip(exacts, xlas, cands)
    )


TIMED_FAR = 10.0  # a timed output this many times its allowance away is no precision effect


def timed_output_verdict(
    exacts: Arrays,
    xlas: Arrays,
    checked: Arrays | None,
    timed: Arrays | None,
    bad_claim: tuple[str, str] | None,
    atol: float,
    rtol: float,
) -> tuple[str, str | None, str] | None:
    """Judge one saved timed output. ``checked``: the candidate's checked outputs for the same
    inputs (they passed), or None; ``timed``: the timed outputs, or None when ``bad_claim``
    (category, message) says why they could not be read. Returns None (fine) or
    (outcome, category, message).

    ``rejected`` only for a difference precision cannot explain: the timed output is far outside
    the allowance (> TIMED_FAR times), or it differs from the checked output of the same inputs
    by more than the whole allowance (the same program on the same inputs); otherwise
    ``incorrect`` with the numbers (e.g. a nondeterministic kernel that lands just outside)."""
    if bad_claim is not None:
        return (
            Outcome.REJECTED,
            "timed_output_mismatch",
            f"the output could not be read or has the wrong structure ({bad_claim[1]}); "
            "the outputs of timed calls must be as correct as the checked ones",
        )
    assert timed is not None  # None only together with bad_claim
    ok, cat, errs, msg = compare_set(exacts, xlas, timed, atol, rtol)
    if ok:
        return None
    assert errs is not None  # a failure comes from a compared output
    if errs["worst_excess"] > TIMED_FAR:
        return (
            Outcome.REJECTED,
            "timed_output_mismatch",
            f"wrong result, far outside the allowance ({msg}): the outputs of timed calls "
            "must be as correct as the checked ones",
        )
    if checked is not None:
        for e, x, c, t in zip(exacts, xlas, checked, timed):
            ef, xf = _f32(e), _f32(x)
            allowed = atol + rtol * np.abs(ef) + np.where(np.isfinite(xf), np.abs(xf - ef), 0)
            with np.errstate(invalid="ignore"):
                if np.any(~(np.abs(_f32(t) - _f32(c)) <= allowed)):
                    return (
                        Outcome.REJECTED,
                        "timed_output_mismatch",
                        f"the timed output differs from the checked output for the same "
                        f"inputs by more than the allowance ({msg})",
                    )
    return Outcome.INCORRECT, cat, msg


def _f32(a: ArrayLike) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def detect_cheat(
    set_ids: Sequence[str],
    inputs: Mapping[str, Arrays],
    refs: Mapping[str, Arrays],
    cands: Mapping[str, Arrays],
    atol: float,
    rtol: float,
    extra_refs: Mapping[str, tuple[Arrays, Arrays]] | None = None,
    exacts: Mapping[str, Arrays] | None = None,
) -> tuple[str, str] | None:
    """Classify a failed candidate whose outputs look like a cheat rather than a bug.

    ``inputs``/``refs`` (XLA outputs)/``exacts`` (exact answers)/``cands``: set id -> list of
    arrays. ``extra_refs``: label -> (exact outputs, XLA outputs) for well-known inputs (the
    fixed public seeds). Returns None or (category, message)."""
    ids = [s for s in set_ids if s in cands]
    exacts = exacts or refs
    for sid in ids:
        # memorised: the output is the answer for ANOTHER input set
        for other in ids:
            if other != sid and _passes(exacts[other], refs[other], cands[sid], atol, rtol):
                return ("memorized_output", f"the output for input set {sid} matches the reference of another set")
        for label, (oex, oxla) in (extra_refs or {}).items():
            if _passes(oex, oxla, cands[sid], atol, rtol):
                return ("memorized_output", f"the output matches the reference for {label}, not for the inputs given")
    for sid in ids:
        # an input passed through
        for k, c in enumerate(cands[sid]):
            for j, x in enumerate(inputs[sid]):
                if x.shape == c.shape and np.array_equal(_f32(x), _f32(c)):
                    return "returns_input", f"output {k} is input {j} returned unchanged"
    for sid in ids:
        # a constant
        for k, (r, c) in enumerate(zip(refs[sid], cands[sid])):
            cf = _f32(c)
            if cf.size > 1 and np.all(cf == cf.flat[0]) and not np.all(_f32(r) == _f32(r).flat[0]):
                return "constant_output", f"output {k} is the constant {float(cf.flat[0]):g}"
    if len(ids) >= 2:
        # the same output for different inputs
        a, b = ids[0], ids[1]
        if all(np.array_equal(_f32(x), _f32(y)) for x, y in zip(cands[a], cands[b])) and not all(
            np.array_equal(_f32(x), _f32(y)) for x, y in zip(refs[a], refs[b])
        ):
            return ("constant_output", "identical outputs for different inputs: the output ignores its inputs")
    return None


# --------------------------------------------------------------------------- timing


def timing_stats(samples: Sequence[float]) -> dict[str, Any]:
    arr = np.asarray(samples, dtype=np.float64)
    med = float(np.median(arr))
    p10, p90 = np.percentile(arr, [10, 90])
    return {
        "median_s": med,
        "min_s": float(arr.min()),
        "max_s": float(arr.max()),
        "spread": float((p90 - p10) / med) if med > 0 else math.inf,
        "n": int(arr.size),
        "samples": [float(x) for x in arr],
    }


def physical_floor(flops: int, nbytes: int, peak_flops: float, peak_bw: float, platform: str) -> float | None:
    """The least time the work can take on the target (the roofline time), with the platform's
    slack: a median below it is rejected as impossible; between it and the roofline itself a
    correct result is held for review (``review.hold_reasons``). None where the peaks are unknown."""
    t = roofline_time(flops, nbytes, peak_flops, peak_bw)
    return None if t is None else t * FLOOR_SLACK.get(platform, 0.5)


def plausibility(
    durations: list[float],
    starts_ns: list[int] | None,
    phase_wall_s: float,
    window_ns: tuple[int, int] | None,
    floor_s: float | None,
    profile_ns: tuple[int, int] | None = None,
    also: Sequence[float] = (),
) -> str | None:
    """Returns None or a reason the timing cannot be true.

    ``window_ns``: the trusted side's clock (Unix ns) when the timing phase was asked for and
    when its reply arrived; ``profile_ns``: the trace's own session start/stop (Unix ns);
    ``starts_ns``: execution starts relative to the session start; ``also``: the durations of
    the other program timed in the same phase (the baseline beside the candidate)."""
    if any(not (d > 0) or not math.isfinite(d) for d in list(durations) + list(also)):
        return "a timed execution has a non-positive duration"
    total = sum(durations) + sum(also)
    if total >= phase_wall_s:
        return (
            f"the timed executions add up to {total:.4g} s, more than the {phase_wall_s:.4g} s "
            "the whole timing phase took"
        )
    if window_ns is not None:
        if profile_ns is None:
            return "the trace does not say when it was recorded"
        lo, hi = window_ns
        p0, p1 = profile_ns
        if p0 < lo or p1 > hi:
            return "the trace was not recorded during this timing phase"
        if starts_ns:
            span = p1 - p0
            if min(starts_ns) < 0 or max(s + int(d * 1e9) for s, d in zip(starts_ns, durations)) > span + 1_000_000:
                return "trace events lie outside the profiling session"
    if floor_s is not None:
        med = float(np.median(durations))
        if med < floor_s:
            return f"median {med:.3g} s is below the physical floor {floor_s:.3g} s for this workload on this hardware"
    return None
