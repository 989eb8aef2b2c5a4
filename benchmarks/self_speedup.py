"""Does identical code come out as a tie, under load? And are real differences still told apart?

1. The XLA reference of each workload, submitted as a candidate (its starter file, rule "pallas
   required" off), evaluated against the XLA baseline ``--repeats`` times per workload at the
   small profile, through a warm pool as the worker uses it, while this script keeps a busy
   numpy loop running on the core the children are pinned to. Goal: no repeat labelled faster
   or slower, every median within 0.98-1.02.
2. A genuinely slower candidate (12p computed twice, the second pass depending on the first)
   and a genuinely faster one (12p's reference against a test-only copy of the workload whose
   baseline does the work twice): they must still come out slower and faster.
3. The wall time that re-timing the baseline adds to each evaluation (compiling the exported
   baseline in the candidate's child, its warm-up and timed calls), as a share of the
   evaluation's wall time.

Run: ``.venv/bin/python benchmarks/self_speedup.py [--repeats 20] [--workloads 12p,8p,1p,19k,46k]``.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.busy import busy_loop  # noqa: E402
from catalog.starter import starter_source  # noqa: E402
from jaxbench import harness, sandbox, workloads  # noqa: E402

TWICE_12P = '''
import jax.numpy as jnp
from jax import lax


def _rms(x, scale, eps):
    xf = x.astype(jnp.float32)
    normed = (xf * lax.rsqrt(jnp.mean(lax.square(xf), axis=-1, keepdims=True) + eps)).astype(x.dtype)
    return normed * scale


def workload(x, scale):
    eps = CONFIG["epsilon"]
    first = _rms(x, scale, eps)
    # the second pass depends on the first (x * 0 is not folded for floats): twice the work
    return _rms(x + first * jnp.zeros((), x.dtype), scale, eps)
'''


def _pessimised_12p():
    """A test-only copy of 12p whose XLA baseline computes RMSNorm twice, the second pass
    depending on the first (as TWICE_12P does)."""
    import inspect

    import jax.numpy as jnp

    wl = workloads.get("12p")
    ref = wl.reference

    def slow_reference(x, scale, *, epsilon):
        first = ref(x, scale, epsilon=epsilon)
        return ref(x + first * jnp.zeros((), x.dtype), scale, epsilon=epsilon)

    slow_reference.__signature__ = inspect.signature(ref)
    return dataclasses.replace(wl, reference=slow_reference)


def _summary(recs):
    sp = [r["speedup"] for r in recs if r.get("speedup") is not None]
    out = {o: sum(r["outcome"] == o for r in recs) for o in ("correct_faster", "correct_tie", "correct_slower")}
    out["other"] = len(recs) - sum(out.values())
    return sp, out


def _added(rec):
    """Seconds re-timing the baseline added (the child's account: compiling the exported
    baseline, its warm-up and timed calls), and the evaluation's wall seconds."""
    p = rec["phases"]
    return p.get("child_baseline_s", 0.0), p.get("total_s", 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--workloads", default="12p,8p,1p,19k,46k")
    ap.add_argument("--no-load", action="store_true", help="do not start the busy loop")
    ap.add_argument(
        "--differences", type=int, default=0, help="repeats of each real difference (default: a quarter of --repeats)"
    )
    ap.add_argument(
        "--same-core",
        action="store_true",
        help="pin the children to the busy loop's core (a stress case: they then get half a core, preempted mid-call)",
    )
    args = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    core = cores[-1]
    if args.same_core:
        os.environ["JAXBENCH_CPU_CORES"] = str(core)
    load = contextlib.ExitStack()
    said = None if args.no_load else load.enter_context(busy_loop(core))
    where = (
        f"pinned to core {core}, the busy loop's"
        if args.same_core
        else "pinned, as in production, to the least busy core when each starts"
    )
    print(f"machine: {os.cpu_count()} CPUs; sandbox children {where}; " + (said or "no extra load"))
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    t0 = time.time()
    pool = harness.WarmPool("cpu", size=1, limits=sandbox.Limits(memory_bytes=6 << 30))
    added = []
    try:
        print("1. the XLA reference against itself (identical code), small profile")
        print(
            f"   {'workload':<9} {'n':>3} {'median':>7} {'min':>7} {'max':>7}  faster  tie  slower  "
            f"other  median interval width"
        )
        total = {"correct_faster": 0, "correct_tie": 0, "correct_slower": 0, "other": 0}
        for wid in args.workloads.split(","):
            wl = workloads.get(wid)
            src = starter_source(wl, "small")
            recs = []
            for _ in range(args.repeats):
                pool.wait_ready()
                rec = pool.evaluate(wid, src, profile="small", hardware="cpu", require_pallas=False)
                recs.append(rec)
                if rec.get("speedup") is not None:
                    added.append(_added(rec))
            sp, out = _summary(recs)
            for k in total:
                total[k] += out[k]
            widths = [r["speedup_ci"][1] - r["speedup_ci"][0] for r in recs if r.get("speedup_ci")]
            reached = [r["resolution"]["halfwidth"] for r in recs if (r.get("resolution") or {}).get("halfwidth")]
            rounds = [r["resolution"]["rounds"] for r in recs if r.get("resolution")]
            print(
                f"   {wid:<9} {len(recs):>3} {statistics.median(sp):>7.3f} {min(sp):>7.3f} "
                f"{max(sp):>7.3f}  {out['correct_faster']:>6}  {out['correct_tie']:>3}  "
                f"{out['correct_slower']:>6}  {out['other']:>5}  "
                f"{statistics.median(widths) if widths else float('nan'):.3f}"
            )
            if reached:
                print(
                    f"      adaptive sampling: half-width reached median {100 * statistics.median(reached):.1f}% "
                    f"(max {100 * max(reached):.1f}%), rounds median {statistics.median(rounds):g} (max {max(rounds)})"
                )
            for r in recs:
                if r["outcome"] != "correct_tie":
                    print(f"      {r['outcome']}: {r['message'][:200]} {r['notes'][-1:]}")
        n = sum(total.values())
        print(
            f"   all: {total['correct_faster'] + total['correct_slower']} of {n} labelled faster or "
            f"slower ({total['correct_faster']} faster, {total['correct_slower']} slower), "
            f"{total['correct_tie']} ties, {total['other']} not correct"
        )

        print("\n2. real differences, same conditions")
        wl = workloads.get("12p")
        for label, w, src in (
            ("12p computed twice (slower)", "12p", TWICE_12P),
            (
                "12p reference vs a baseline doing twice the work (faster)",
                _pessimised_12p(),
                starter_source(wl, "small"),
            ),
        ):
            recs = []
            for _ in range(args.differences or max(3, args.repeats // 4)):
                pool.wait_ready()
                recs.append(pool.evaluate(w, src, profile="small", hardware="cpu", require_pallas=False))
            sp, out = _summary(recs)
            shown = sp if len(sp) <= 12 else [min(sp), statistics.median(sp), max(sp)]
            print(
                f"   {label}: speedups {'min/median/max ' if len(sp) > 12 else ''}"
                f"{' '.join(f'{s:.2f}' for s in shown)}; "
                f"faster {out['correct_faster']}, tie {out['correct_tie']}, "
                f"slower {out['correct_slower']}, other {out['other']}"
            )
            for r in recs[:1]:
                print(f"      e.g. {r['message'][:160]}")

        print("\n3. wall time added by re-timing the baseline beside the candidate")
        shares = [a / t for a, t in added if t > 0]
        secs = [a for a, _ in added]
        print(
            f"   median {statistics.median(secs):.3f} s per evaluation = "
            f"{statistics.median(shares) * 100:.1f}% of the evaluation's wall time "
            f"(p90 {sorted(shares)[int(0.9 * (len(shares) - 1))] * 100:.1f}%; n={len(shares)}; "
            "compiling the exported baseline in the child + its warm-up and timed calls)"
        )
    finally:
        pool.close()
        load.close()
    print(f"\n(total bench time {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
