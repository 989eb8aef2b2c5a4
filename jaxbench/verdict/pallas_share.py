"""The rule that the Pallas kernels carry the workload's work (trusted side, standard library
only): how much of the workload's FLOPs a candidate's program computes OUTSIDE its
``pallas_call`` kernels, i.e. as plain XLA.

The candidate's child walks its own traced jaxpr (``jaxpr_cost.program_cost``) and reports the
FLOPs of every operation outside the kernels; that report is a claim from a hostile process (a
tripwire like ``has_pallas_call``: a candidate that forges it is not caught by this rule). The
denominator is the trusted side's own walk over the workload's XLA reference: the workload's
FLOPs. :func:`assess` divides one by the other and decides.

Layout glue (reshape, transpose, broadcast, pad, slice, concatenate, casts, gather/scatter
indexing, iota, masks) costs nothing in the walk, so the share measures arithmetic only.

The trusted replacement, :func:`assess_artifact`, reads the same share from the candidate's
exported program (``jaxbench/profiling/hlo_cost.py`` over its StableHLO, in the timer child that
runs no candidate code) over the same walk of the workload's exported baseline
(``prepare.reference_hlo_cost``), and fails closed where the count cannot be trusted. Measured
with ``benchmarks/pallas_share.py --artifact`` (JAX 0.10.2; TPU export under an abstract
"TPU v6 lite" target, at the small and the full profile; "jaxpr" is the old claim's share; x N:
the default configuration and every SWEEP/SWEEP_SMALL point; every honest row has >= 1 kernel
call that runs unconditionally, 0 only inside branches)::

    kernel                      small: artifact (jaxpr)       full: artifact (jaxpr)     verdict
    examples 12p 1p 37k 41k 8p  0.00% (0.00%)                 0.00% (0.00%)              ok
    example 9p (2 kernels)      0.00% (0.00%)                 0.00% (0.00%)              ok
    expert 1p, 4p               0.10% (0.10%) x4              0.01% (0.01%) x24          ok
    expert 2p, 6p               0.19% (0.19%) x4              0.01% (0.01%) x24, x15     ok
    expert 3p (MLA)             71.30% (71.30%) x4            68.85% (68.85%) x25        ok (3p allowance 75%)
    expert 7p, 8p, 11p          0.00% (0.00%) x4              0.00% (0.00%) x22/x28/x50  ok
    JAX candidates 1p 4p 11p    0.00% (0.00%)                 0.00% (0.00%)              ok
    JAX candidate 2p            0.10% (0.10%)                 0.01% (0.01%)              ok
    JAX candidate 3p (MLA)      71.23% (71.23%)               68.84% (68.84%)            ok (3p allowance 75%)
    test rmsnorms (2)           0.00% (0.00%)                 0.00% (0.00%)              ok
    costume trivial copy        100% (100%)                   100% (100%)                work_outside_pallas
    costume kernel in cond      100% (100%), kernel 0/1       100% (100%)                no_pallas_call
    costume while, data bound   125% (125%)                   125% (125%)                uncountable_work
    costume opaque custom call  0.00% (0.00%: passes the old)  0.00% (0.00%)             uncountable_work

The two walks agree on every honest kernel (no CHLO function such as erf is involved, which
the HLO counts as several operations and the jaxpr as one); the opaque custom call is the
costume the jaxpr claim cannot see at all. Costumes: ``tests/jaxbench/adversarial/candidates/
trivial_copy_pallas_around_xla.py`` and ``tests/jaxbench/harness/artifact_costumes/``.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

# Above this share of the workload's FLOPs outside the Pallas kernels, a candidate is rejected
# where the leaderboard requires Pallas. Measured with benchmarks/pallas_share.py (jaxpr walk, small
# profile as the CPU child traces it, full profile against an abstract TPU as the lowering
# pre-check does), every honest kernel the project has -- 6 examples, 8 experts with every
# SWEEP/SWEEP_SMALL point, 5 JAX TPU kernel candidates, the 2 passing Pallas test candidates:
#   0%     examples (12p 1p 37k 41k 8p 9p), experts 7p 8p 11p, JAX 1p 4p 11p, test rmsnorms
#   0.10%  expert 1p, expert 4p, JAX 2p (small; 0.01% full): the softmax scale on q in XLA
#   0.19%  expert 2p, expert 6p (small; 0.01% full): the same kind of q pre-scaling
#   69-71% expert 3p and JAX 3p (MLA): the projections, see OUTSIDE_ALLOWANCE
# and the trivial-copy costume around XLA (tests/jaxbench/adversarial) 100% at both profiles. Outside
# 3p the largest honest share is 0.19%: 10% leaves ample room for an honest prologue or
# epilogue (a scale, a residual add, a final reduction) while an entry whose main computation
# is XLA is far above it.
THRESHOLD = 0.10
# Workloads whose honest kernels leave a measured, named part of the work to XLA by design,
# with the share allowed instead of THRESHOLD and the reason shown on /docs/.
OUTSIDE_ALLOWANCE = {
    "3p": (
        0.75,
        "multi-head latent attention: the low-rank Q/KV up- and down-projections and "
        "the output projection are dense GEMMs, 69-71% of the workload's FLOPs, which "
        "the expert kernel, JAX's kernel candidate and the public optimized file all "
        "leave to XLA; the attention core (the other ~30%) must be a Pallas kernel",
    ),
}
TOP_N = 5
CATEGORY = "work_outside_pallas"


class TopOutside(TypedDict):
    primitive: str
    flops: int
    where: str


class PallasShare(TypedDict):
    """The record's ``pallas_share`` dict (see :func:`assess`)."""

    outside_flops: int | None
    total_flops: int | None
    inside_flops: int | None
    outside_share: float | None
    threshold: float
    by_primitive: dict[str, int]
    top_outside: list[TopOutside]
    unknown_trip_loops: int
    ok: bool
    message: str


def threshold_for(workload_id: str) -> float:
    """The largest share of the workload's FLOPs allowed outside Pallas kernels."""
    allowance = OUTSIDE_ALLOWANCE.get(str(workload_id))
    return allowance[0] if allowance else THRESHOLD


def _count(v: object) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return int(v) if v >= 0 else None


def _top(items: object) -> list[TopOutside]:
    out: list[TopOutside] = []
    if not isinstance(items, list):
        return out
    for it in items[:TOP_N]:
        if not isinstance(it, dict):
            continue
        f = _count(it.get("flops"))
        if f is None:
            continue
        out.append(
            {"primitive": str(it.get("primitive", "?"))[:64], "flops": f, "where": str(it.get("where", "?"))[:120]}
        )
    return out


def _pct(share: float) -> str:
    pct = 100.0 * share
    return f"{pct:.1f}%" if pct < 10 else f"{min(pct, 100.0):.0f}%"


def assess(
    claim: object, reference_flops: object, *, require_pallas: bool, threshold: float = THRESHOLD
) -> PallasShare:
    """The share of the workload's FLOPs a candidate computes outside its Pallas kernels.

    ``claim``: the child's ``program_cost`` report (untrusted data: validated here);
    ``reference_flops``: the same walk over the workload's XLA reference (trusted).
    Returns the record's ``pallas_share`` dict::

        {"outside_flops", "total_flops" (the reference's), "inside_flops", "outside_share",
         "threshold", "by_primitive", "top_outside": [{"primitive", "flops", "where"}],
         "unknown_trip_loops", "ok", "message"}

    ``ok`` is False (reject, category :data:`CATEGORY`) when ``require_pallas`` and the share
    is above ``threshold``. Without ``require_pallas`` the share is measured and shown, never
    decisive. A missing or malformed claim (the walk failed, or the candidate tampered with
    it) leaves the share unmeasured, never rejects: a hostile child could as well forge a
    well-formed claim, so refusing would only punish harness failures."""
    total = _count(reference_flops)
    out: PallasShare = {
        "outside_flops": None,
        "total_flops": total,
        "inside_flops": None,
        "outside_share": None,
        "threshold": threshold,
        "by_primitive": {},
        "top_outside": [],
        "unknown_trip_loops": 0,
        "ok": True,
        "message": "",
    }
    outside = _count(claim.get("outside_flops")) if isinstance(claim, dict) else None
    if outside is None:
        why = claim.get("error") if isinstance(claim, dict) else None
        out["message"] = (
            "share of FLOPs outside Pallas not measured: the child reported no "
            "valid cost of its program" + (f" ({str(why)[:200]})" if why else "")
        )
        return out
    assert isinstance(claim, dict)  # outside is None unless claim is a dict
    out["outside_flops"] = outside
    out["inside_flops"] = _count(claim.get("inside_flops"))
    out["unknown_trip_loops"] = _count(claim.get("unknown_trip_loops")) or 0
    by = claim.get("outside")
    if isinstance(by, dict):
        pairs = [(str(k)[:64], _count(v)) for k, v in list(by.items())[:64]]
        out["by_primitive"] = dict(sorted(((k, v) for k, v in pairs if v), key=lambda kv: -kv[1]))
    out["top_outside"] = _top(claim.get("top_outside"))
    if not total:
        # a workload with no arithmetic (pure data movement): nothing to share
        out["outside_share"] = 0.0 if outside == 0 else 1.0
    else:
        out["outside_share"] = outside / total
    share = out["outside_share"]
    assert share is not None  # set just above
    if share > threshold:
        where = ""
        if out["top_outside"]:
            t = out["top_outside"][0]
            where = f": {t['primitive']} at {t['where']}"
        out["message"] = (
            f"{_pct(share)} of the workload's FLOPs run outside Pallas kernels"
            f"{where} (at most {_pct(threshold)} may; "
            f"{outside:.3g} of {total or 0:.3g} FLOPs)"
        )
        out["ok"] = not require_pallas
    else:
        out["message"] = f"{_pct(share)} of the workload's FLOPs run outside Pallas kernels"
    return out


UNCOUNTABLE = "uncountable_work"
NO_KERNEL = "no_pallas_call"


class ArtifactShare(PallasShare, total=False):
    """:func:`assess_artifact`'s dict: :class:`PallasShare` plus why it is not ok."""

    category: str  # "" when ok, else UNCOUNTABLE, NO_KERNEL or CATEGORY
    uncountable: list[str]
    kernels_unconditional: int
    kernels_conditional: int
    judged: str  # which program the share was counted on (the harness fills it in)


def _reasons(v: object) -> list[str]:
    if not isinstance(v, list):
        return ["the artifact's facts carry no list of uncountable work"]
    return [str(r)[:300] for r in v[:MAX_REASONS]]


MAX_REASONS = 20


def assess_artifact(
    facts: object, reference_flops: object, require_pallas: bool, threshold: float = THRESHOLD
) -> ArtifactShare:
    """The share of the workload's FLOPs a candidate's EXPORTED PROGRAM computes outside its
    Pallas kernels, from ``hlo_cost.artifact_facts`` of the artifact (computed by the timer
    child, which never runs candidate code) over ``reference_flops``: the same walk over the
    workload's exported baseline (``prepare.reference_hlo_cost(...)["outside_flops"]``; the
    facts dict itself is accepted too). For the CPU target, ``facts`` are those of the judged
    TPU program, of which the timed cpu program is the twin (TRUST.md 1).

    Returns :class:`PallasShare`'s dict (as :func:`assess`) plus ``category``, ``uncountable``
    and the kernel counts. Fail closed, in this order, when ``require_pallas``:

    * ``uncountable`` non-empty (a loop of data-dependent trip count holding work, an opaque
      custom call, an unknown operation, a program that cannot be read; missing or malformed
      facts count as such): not ok, category :data:`UNCOUNTABLE`, the reasons in the message;
    * no kernel call that runs unconditionally (none at all, or only inside a ``cond`` branch
      or a loop that may not run): not ok, category :data:`NO_KERNEL`;
    * the share above ``threshold``: not ok, category :data:`CATEGORY`.

    Without ``require_pallas`` the share and the reasons are shown and ``ok`` stays True."""
    if isinstance(reference_flops, dict):
        reference_flops = reference_flops.get("outside_flops")
    total = _count(reference_flops)
    out: ArtifactShare = {
        "outside_flops": None,
        "total_flops": total,
        "inside_flops": None,  # a kernel's body is opaque in the artifact
        "outside_share": None,
        "threshold": threshold,
        "by_primitive": {},
        "top_outside": [],
        "unknown_trip_loops": 0,
        "ok": True,
        "message": "",
        "category": "",
        "uncountable": [],
        "kernels_unconditional": 0,
        "kernels_conditional": 0,
    }
    d = facts if isinstance(facts, dict) else {}
    outside = _count(d.get("outside_flops"))
    reasons = _reasons(d.get("uncountable")) if d else ["no facts about the artifact"]
    if outside is None and not reasons:
        reasons = ["the artifact's facts carry no FLOP count"]
    kern_v = d.get("kernels")
    kern: dict[str, Any] = kern_v if isinstance(kern_v, dict) else {}
    uncond = _count(kern.get("unconditional")) or 0
    cond = _count(kern.get("conditional")) or 0
    out["kernels_unconditional"], out["kernels_conditional"] = uncond, cond
    out["uncountable"] = reasons
    out["unknown_trip_loops"] = sum(1 for r in reasons if "trip count" in r)
    by = d.get("by_op")
    if isinstance(by, dict):
        pairs = [(str(k)[:64], _count(v)) for k, v in list(by.items())[:64]]
        out["by_primitive"] = dict(sorted(((k, v) for k, v in pairs if v), key=lambda kv: -kv[1]))
    out["top_outside"] = _top(d.get("top_outside"))
    if outside is not None:
        out["outside_flops"] = outside
        out["outside_share"] = (outside / total) if total else (0.0 if outside == 0 else 1.0)
    share = out["outside_share"]
    measured = f"{_pct(share)} of the workload's FLOPs run outside Pallas kernels" if share is not None else ""

    def reject(category: str, message: str) -> ArtifactShare:
        out["message"] = message
        out["category"] = category if require_pallas else ""
        out["ok"] = not require_pallas
        return out

    if reasons:
        more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
        return reject(
            UNCOUNTABLE,
            "the work outside Pallas kernels cannot be counted: "
            + reasons[0]
            + more
            + "; write loops with a static trip count (fori_loop/scan with constant bounds)"
            " and call no custom calls other than Pallas kernels",
        )
    if uncond == 0:
        why = (
            f"{cond} Pallas kernel call(s) only inside a conditional branch or a loop that may not run"
            if cond
            else "the exported program contains no Pallas kernel call"
        )
        return reject(NO_KERNEL, f"no Pallas kernel runs unconditionally: {why} (this leaderboard requires one)")
    assert share is not None and outside is not None  # no reasons: outside was counted
    if share > threshold:
        where = ""
        if out["top_outside"]:
            t = out["top_outside"][0]
            where = f": {t['primitive']} at {t['where']}"
        return reject(
            CATEGORY,
            f"{measured}{where} (at most {_pct(threshold)} may; {outside:.3g} of {total or 0:.3g} FLOPs)",
        )
    out["message"] = measured
    return out


def short(share: dict[str, Any] | None) -> str:
    """The share alone for a table cell ("3.0%"); "" when not measured."""
    if not isinstance(share, dict) or _number(share.get("outside_share")) is None:
        return ""
    value = _number(share["outside_share"])
    assert value is not None  # checked just above
    return _pct(value)


def _number(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def summary(share: dict[str, Any] | None) -> str:
    """One line for pages: "share of FLOPs outside Pallas: 3.0%"."""
    return f"share of FLOPs outside Pallas: {short(share) or 'not measured'}"


def largest(share: dict[str, Any] | None) -> str:
    """The largest outside operation, for pages: "dot_general at candidate.py:31"; "" if none."""
    top = share.get("top_outside") if isinstance(share, dict) else None
    if not top or not isinstance(top, list) or not isinstance(top[0], dict):
        return ""
    return f"{top[0].get('primitive', '?')} at {top[0].get('where', '?')}"
