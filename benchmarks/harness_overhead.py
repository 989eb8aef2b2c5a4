"""Harness overhead and timing fidelity, measured through the real sandboxed pipeline.

Run from the repository root:  .venv/bin/python benchmarks/harness_overhead.py [--n 20] [--repeats 10]

Prints three figures (all on the `small` profile of 12p RMSNorm on this machine's CPU):

1. Per-candidate overhead beyond compile + run, with a warm pool (the child already has JAX
   imported when the candidate arrives): median over >= 20 candidates of
   total wall time - (child import + trace + lower + compile + the correctness executions +
   the warm-up and timed loops). Shown for a Pallas kernel (TPU interpret mode: a large trace)
   and for the plain-JAX reference submitted as a candidate (a small trace).
2. The speedup the harness reports for the reference measured against itself: the XLA
   baseline is measured once, then the reference, submitted as a candidate, is evaluated
   10 times against it (target 0.97-1.03).
3. Device-event median vs plain wall-clock timing of the same kernel: the per-call
   wall-clock (perf_counter around call + block_until_ready in the child) against the
   profiler's execution events, and how much each varies across the repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jaxbench import harness

REFERENCE_AS_CANDIDATE = '''
import jax
import jax.numpy as jnp
from jax import lax

CONFIG = {"epsilon": 1e-5}


def workload(x, scale):
    # 12p's reference, verbatim
    xf = x.astype(jnp.float32)
    mean2 = jnp.mean(lax.square(xf), axis=-1, keepdims=True)
    normed = (xf * lax.rsqrt(mean2 + CONFIG["epsilon"])).astype(x.dtype)
    return normed * scale
'''

PALLAS_CANDIDATE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jaxbench", "kernels", "examples", "12p-rmsnorm.py"
)


def overhead(rec) -> float:
    ph = rec["phases"]
    child = sum(ph.get("child_compile", {}).values())
    run = ph.get("child_exec_s", 0) + ph.get("child_warmup_s", 0) + ph.get("child_loop_s", 0)
    return ph["total_s"] - child - run


def pct(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20, help="candidates per overhead figure")
    ap.add_argument("--repeats", type=int, default=10, help="reference-vs-itself repeats")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    t0 = time.time()
    base = harness.measure_baseline("12p", profile="small", hardware="cpu")
    print(
        f"baseline 12p small: median {base['median_s'] * 1e3:.4f} ms "
        f"({base['timing']['method']}, spread {base['timing']['spread']:.2f})"
    )
    pallas_src = open(PALLAS_CANDIDATE).read()

    pool = harness.WarmPool("cpu", size=1, refill="after")
    try:
        results = {}
        for label, src, require in (
            ("pallas (interpret mode)", pallas_src, True),
            ("reference as candidate", REFERENCE_AS_CANDIDATE, False),
        ):
            recs = []
            for _ in range(args.n if label.startswith("pallas") else max(args.n, args.repeats)):
                pool.wait_ready()  # a worker idles between candidates
                rec = pool.evaluate("12p", src, profile="small", hardware="cpu", require_pallas=require, baseline=base)
                assert rec["outcome"].startswith("correct_"), (rec["outcome"], rec["message"])
                recs.append(rec)
            results[label] = recs

        print("\n1. per-candidate overhead beyond compile + run (warm pool), seconds")
        for label, recs in results.items():
            ov = [overhead(r) for r in recs]
            parts = {
                k: statistics.median(r["phases"].get(k, 0.0) for r in recs)
                for k in ("startup_s", "prepare_s", "job_s", "child_stop_trace_s", "verdict_s", "close_s", "total_s")
            }
            print(
                f"   {label:<26} median {statistics.median(ov):.3f}  p90 {pct(ov, 0.9):.3f}  "
                f"(n={len(ov)}; total {parts['total_s']:.2f}; of which hello-wait "
                f"{parts['startup_s']:.3f}, inputs+refs {parts['prepare_s']:.3f}, "
                f"trace stop {parts['child_stop_trace_s']:.3f}, verdict {parts['verdict_s']:.3f}, "
                f"close {parts['close_s']:.3f})"
            )

        print("\n2. reference measured against itself (speedup = baseline / candidate)")
        refs = results["reference as candidate"][: args.repeats]
        sp = [r["speedup"] for r in refs]
        inside = sum(0.97 <= s <= 1.03 for s in sp)
        print("   speedups: " + " ".join(f"{s:.3f}" for s in sp))
        print(
            f"   median {statistics.median(sp):.3f}, min {min(sp):.3f}, max {max(sp):.3f}; "
            f"{inside}/{len(sp)} within 0.97-1.03"
        )

        print("\n3. device-event median vs wall clock, same kernel, across repeats")
        for label, recs in (("reference (XLA)", refs), ("pallas (interpret)", results["pallas (interpret mode)"])):
            dev = [r["timing"]["median_s"] for r in recs]
            wall = [r["timing"]["wall_median_s"] for r in recs]
            ratio = [w / d for w, d in zip(wall, dev)]
            cv_d = statistics.pstdev(dev) / statistics.mean(dev)
            cv_w = statistics.pstdev(wall) / statistics.mean(wall)
            within = [r["timing"]["spread"] for r in recs]
            print(
                f"   {label:<20} device median {statistics.median(dev) * 1e3:.4f} ms "
                f"(cv across repeats {cv_d * 100:.1f}%), wall median "
                f"{statistics.median(wall) * 1e3:.4f} ms (cv {cv_w * 100:.1f}%); "
                f"wall/device {statistics.median(ratio):.3f}; within-run spread "
                f"(p90-p10)/median {statistics.median(within):.2f}"
            )
    finally:
        pool.close()
    print(f"\n(total bench time {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
