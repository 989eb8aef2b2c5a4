"""The share of each honest kernel's FLOPs that runs outside its Pallas kernels: the figures
behind ``pallas_share.THRESHOLD``. Traces (never runs) every example, expert (default and every
sweep point), JAX TPU kernel candidate and passing harness test candidate, at the small profile
(TPU interpret mode, as the CPU child traces it) and at the full profile (against an abstract
TPU, as the lowering pre-check does), walks the jaxpr with ``jaxpr_cost`` and divides by the
same walk over the workload's XLA reference. In-process: repository files only.

``.venv/bin/python benchmarks/pallas_share.py [--only 12p,1p] [--profiles small,full]``

``--artifact``: the trusted figures instead (``pallas_share.assess_artifact``): each kernel is
exported for the TPU (``jax.export``, abstract TPU target, at the profile's shapes) as the
export child does, deserialized, and walked with ``hlo_cost.artifact_facts``; the denominator
is the same walk over the workload's exported XLA baseline. Printed beside the old jaxpr share.
The costumes of the adversarial corpus and of ``tests/jaxbench/harness/artifact_costumes``
are measured too; they must fail closed.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxbench import workloads  # noqa: E402
from jaxbench.kernels import experts  # noqa: E402
from jaxbench.profiling import jaxpr_cost  # noqa: E402
from jaxbench.verdict import pallas_share  # noqa: E402
from tests.jaxbench.adversarial import corpus  # noqa: E402
from tests.jaxbench.kernels import _candidates as kc  # noqa: E402

EXAMPLES = ROOT / "jaxbench" / "kernels" / "examples"
JAX_CANDIDATES = ROOT / "tests" / "jaxbench" / "kernels" / "jax_candidates"
HARNESS_CANDIDATES = ROOT / "tests" / "jaxbench" / "harness" / "candidates"
# harness test candidates that are honest Pallas kernels (expected correct)
HONEST_HARNESS = ("correct_rmsnorm.py", "slow_rmsnorm.py")
ARTIFACT_COSTUMES = ROOT / "tests" / "jaxbench" / "harness" / "artifact_costumes"


def kernels(profile):
    for p in sorted(EXAMPLES.glob("*.py")):
        if p.name != "__init__.py":
            yield "example", p.name.split("-")[0], p.read_text(), p.name
    for wid in experts.EXPERTS:
        yield "expert", wid, experts.source(wid), experts.EXPERTS[wid]
        for cfg in experts.sweep(wid, profile):
            yield "sweep", wid, experts.configured_source(wid, cfg), str(cfg)
    for p in sorted(JAX_CANDIDATES.glob("*.py")):
        yield "jax", p.name.split("_")[0], p.read_text(), p.name
    for name in HONEST_HARNESS:
        yield "harness", "12p", (HARNESS_CANDIDATES / name).read_text(), name
    yield (
        "costume",
        "12p",
        corpus.source(corpus.ADVERSARIAL_DIR / "trivial_copy_pallas_around_xla.py"),
        "trivial_copy_pallas_around_xla.py",
    )


def costumes():
    """The artifact-only costumes (tests/jaxbench/harness/artifact_costumes): (workload, source, name)."""
    for p in sorted(ARTIFACT_COSTUMES.glob("*.py")):
        if not p.name.startswith("_"):
            yield "costume", "12p", p.read_text(), p.name


def export_facts(source, wl, profile):
    """The candidate exported for the TPU at ``profile``'s shapes, serialized, deserialized
    and walked: what the timer child reports."""
    import jax

    from jaxbench.profiling import hlo_cost

    mod = kc.load_candidate(source, wl, profile, filename="candidate.py")
    specs = wl.input_specs(profile)
    with kc.tpu_target():
        exp = jax.export.export(jax.jit(mod.workload), platforms=["tpu"])(*specs)
    return hlo_cost.facts_from_bytes(bytes(exp.serialize()))


def trace_cost(source, wl, profile):
    import jax
    from jax.experimental.pallas import tpu as pltpu

    mod = kc.load_candidate(source, wl, profile, filename="candidate.py")
    specs = wl.input_specs(profile)
    if profile == "small":
        try:
            with pltpu.force_tpu_interpret_mode():
                traced = jax.jit(mod.workload).trace(*specs)
        except ValueError:  # Tokamax's GMM asks for the TPU generation (11p)
            with pltpu.force_tpu_interpret_mode(), kc.tpu_target():
                traced = jax.jit(mod.workload).trace(*specs)
    else:
        with kc.tpu_target():
            traced = jax.jit(mod.workload).trace(*specs)
    return jaxpr_cost.program_cost(traced.jaxpr)


def reference_cost(wl, profile):
    import jax

    return jaxpr_cost.program_cost(jax.jit(wl.baseline(profile)).trace(*wl.input_specs(profile)).jaxpr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated workload IDs")
    ap.add_argument("--profiles", default="small,full")
    ap.add_argument("--artifact", action="store_true", help="the exported artifact's share (hlo_cost)")
    args = ap.parse_args()
    if args.artifact:
        return main_artifact(args)
    only = set(filter(None, args.only.split(",")))
    worst, worst_allowed = 0.0, {}
    print(f"threshold {100 * pallas_share.THRESHOLD:.0f}%")
    print(
        f"{'profile':<7} {'kind':<8} {'wl':<5} {'outside':>9} {'ref flops':>12} "
        f"{'out flops':>12} {'verdict':<8} largest outside / file"
    )
    t0 = time.time()
    for profile in args.profiles.split(","):
        refs = {}
        for kind, wid, src, name in kernels(profile):
            if only and wid not in only:
                continue
            wl = workloads.get(wid)
            if wid not in refs:
                refs[wid] = reference_cost(wl, profile)["outside_flops"]
            try:
                claim = trace_cost(src, wl, profile)
            except Exception as exc:  # noqa: BLE001
                print(f"{profile:<7} {kind:<8} {wid:<5} trace failed: {type(exc).__name__}: {str(exc)[:150]}  {name}")
                continue
            res = pallas_share.assess(claim, refs[wid], require_pallas=True, threshold=pallas_share.threshold_for(wid))
            if kind != "costume":
                if wid in pallas_share.OUTSIDE_ALLOWANCE:
                    worst_allowed[wid] = max(worst_allowed.get(wid, 0.0), res["outside_share"] or 0.0)
                else:
                    worst = max(worst, res["outside_share"] or 0.0)
            top = res["top_outside"][0] if res["top_outside"] else None
            top_s = f"{top['primitive']}@{top['where']} {top['flops']}" if top else "-"
            print(
                f"{profile:<7} {kind:<8} {wid:<5} {100 * (res['outside_share'] or 0):>8.2f}% "
                f"{refs[wid]:>12.4g} {res['outside_flops']:>12.4g} "
                f"{'ok' if res['ok'] else 'REJECT':<8} {top_s}  {name}"
                + (f"  [unknown-trip loops {claim['unknown_trip_loops']}]" if claim["unknown_trip_loops"] else ""),
                flush=True,
            )
    print(
        f"largest honest share {100 * worst:.2f}% (threshold {100 * pallas_share.THRESHOLD:.0f}%)"
        + "".join(
            f"; {w}: {100 * v:.2f}% (allowance {100 * pallas_share.threshold_for(w):.0f}%)"
            for w, v in worst_allowed.items()
        )
        + f"  (total {time.time() - t0:.0f} s)"
    )


def main_artifact(args):
    from jaxbench.harness import prepare

    only = set(filter(None, args.only.split(",")))
    worst, worst_allowed, failures = 0.0, {}, []
    print(f"threshold {100 * pallas_share.THRESHOLD:.0f}%  (artifact: TPU export, hlo_cost; jaxpr: the old claim)")
    print(
        f"{'profile':<7} {'kind':<8} {'wl':<5} {'artifact':>9} {'jaxpr':>8} {'ref flops':>11} "
        f"{'kern u/c':>8} {'verdict':<8} largest outside / file"
    )
    t0 = time.time()
    for profile in args.profiles.split(","):
        refs, jrefs = {}, {}
        items = list(kernels(profile)) + list(costumes())
        for kind, wid, src, name in items:
            if only and wid not in only:
                continue
            wl = workloads.get(wid)
            if wid not in refs:
                ref = prepare.reference_hlo_cost(wl, profile)
                if ref["uncountable"]:
                    print(f"reference {wid} {profile} uncountable: {ref['uncountable']}")
                refs[wid] = ref["outside_flops"]
                jrefs[wid] = reference_cost(wl, profile)["outside_flops"]
            try:
                facts = export_facts(src, wl, profile)
            except Exception as exc:  # noqa: BLE001
                print(f"{profile:<7} {kind:<8} {wid:<5} export failed: {type(exc).__name__}: {str(exc)[:150]}  {name}")
                continue
            try:
                claim = trace_cost(src, wl, profile)
                jshare = pallas_share.assess(claim, jrefs[wid], require_pallas=True)["outside_share"]
                js = f"{100 * (jshare or 0):>7.2f}%"
            except Exception:  # noqa: BLE001 - the costumes that only exist as artifacts
                js = f"{'-':>8}"
            res = pallas_share.assess_artifact(
                facts, refs[wid], require_pallas=True, threshold=pallas_share.threshold_for(wid)
            )
            share = res["outside_share"]
            if kind != "costume":
                if not res["ok"]:
                    failures.append(f"{profile} {wid} {name}")
                if wid in pallas_share.OUTSIDE_ALLOWANCE:
                    worst_allowed[wid] = max(worst_allowed.get(wid, 0.0), share or 0.0)
                else:
                    worst = max(worst, share or 0.0)
            elif res["ok"]:
                failures.append(f"COSTUME PASSED {profile} {name}")
            top = res["top_outside"][0] if res["top_outside"] else None
            top_s = f"{top['primitive']}@{top['where']} {top['flops']}" if top else "-"
            k = facts["kernels"]
            shown = f"{100 * share:>8.2f}%" if share is not None else f"{'-':>9}"
            print(
                f"{profile:<7} {kind:<8} {wid:<5} {shown} {js} {refs[wid]:>11.4g} "
                f"{k['unconditional']:>4}/{k['conditional']:<3} {'ok' if res['ok'] else 'REJECT':<8} {top_s}  {name}"
                + ("" if res["ok"] else f"  [{res['message'][:160]}]"),
                flush=True,
            )
    print(
        f"largest honest share {100 * worst:.2f}% (threshold {100 * pallas_share.THRESHOLD:.0f}%)"
        + "".join(
            f"; {w}: {100 * v:.2f}% (allowance {100 * pallas_share.threshold_for(w):.0f}%)"
            for w, v in worst_allowed.items()
        )
        + f"  (total {time.time() - t0:.0f} s)"
    )
    print("FAILURES: " + ("; ".join(failures) if failures else "none"))


if __name__ == "__main__":
    main()
