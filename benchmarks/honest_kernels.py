"""Every honest kernel the project has, through the real harness at the small profile on CPU:
the example kernels, the expert kernels (default configuration), JAX's own TPU kernels
wrapped as candidates and level 2's baselines as candidates (identical programs: a tie is right;
a TPU-only workload is skipped here, with its reason), and the level-1 examples of the tasks level
2 repeats against their Pallas baselines. Prints each one's outcome, speedup interval and errors against the exact
answer (candidate's and XLA's). Run after changing a verdict rule; asserts nothing.

``.venv/bin/python benchmarks/honest_kernels.py [--only 12p,1p] [--busy]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.busy import busy_loop, last_core  # noqa: E402
from jaxbench import harness, workloads  # noqa: E402
from jaxbench.kernels import experts, level2  # noqa: E402
from jaxbench.record import format_speedup  # noqa: E402

EXAMPLES = ROOT / "jaxbench" / "kernels" / "examples"
JAX_CANDIDATES = ROOT / "tests" / "jaxbench" / "kernels" / "jax_candidates"


def kernels():
    for p in sorted(EXAMPLES.glob("*.py")):
        if p.name != "__init__.py":
            yield "example", p.name.split("-")[0], p.read_text(), p.name
    for wid in experts.EXPERTS:
        yield "expert", wid, experts.source(wid), experts.implementation(wid)
    for p in sorted(JAX_CANDIDATES.glob("*.py")):
        yield "jax", p.name.split("_")[0], p.read_text(), p.name
    for wid, p in level2.FILES.items():
        yield "level2", wid, p.read_text(), p.name
    for p in sorted(EXAMPLES.glob("*.py")):
        twin = "l2-" + p.name.split("-")[0]
        if twin in level2.FILES:  # level 1's example against level 2's Pallas baseline
            yield "l2-ex", twin, p.read_text(), p.name


def _share(rec):
    """Share of the evaluation's wall time spent re-timing the baseline beside it."""
    p = rec["phases"]
    if not p.get("child_baseline_s") or not p.get("total_s"):
        return "-"
    return f"{100 * p['child_baseline_s'] / p['total_s']:.1f}%"


def _reached(rec):
    """The sampling half-width the adaptive sampling reached, and in how many rounds of 50."""
    res = rec.get("resolution") or {}
    if res.get("halfwidth") is None:
        return "-"
    return f"+-{100 * res['halfwidth']:.1f}% r{res['rounds']}"


def _neighbours(rec):
    """How busy the timing core's cache neighbours were, and whether the interval was widened for it."""
    near = (rec.get("timing") or {}).get("neighbours")
    if not near:
        return ""
    widened = "widened" in (rec.get("message") or "")
    return f"  (neighbours {near['busy']:.2f} cores busy{', interval widened' if widened else ''})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated workload IDs")
    ap.add_argument("--busy", action="store_true", help="a busy loop on the last core throughout")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        said = stack.enter_context(busy_loop(last_core())) if args.busy else "no extra load"
        print(said)
        run(set(filter(None, args.only.split(","))))


def run(only: set[str]) -> None:
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(
        f"{'kind':<8} {'workload':<8} {'outcome':<16} {'speedup':<22} {'cand err':>9} "
        f"{'XLA err':>9} {'beyond tol c/x':>15} {'baseline +':>10} {'reached':>12} {'wall s':>7}  file"
    )
    t0 = time.time()
    with harness.WarmPool("cpu") as pool:
        for kind, wid, src, name in kernels():
            if only and wid not in only:
                continue
            if "cpu" not in workloads.get(wid).platforms:
                print(f"{kind:<8} {wid:<8} {'(skipped)':<16} {workloads.get(wid).platform_note[:150]}  {name}")
                continue
            t = time.time()
            try:
                rec = pool.evaluate(
                    wid,
                    src,
                    profile="small",
                    hardware="cpu",
                    require_pallas=True,
                    timeouts={"compile": 600, "check": 900, "timing": 1800},
                )
            except harness.InfrastructureError as exc:  # the harness's failure: said, and the run goes on
                print(f"{kind:<8} {wid:<8} {'(harness error)':<16} {exc!s:.200}  {name}", flush=True)
                continue
            wall = time.time() - t
            e = rec.get("errors") or {}
            c, x = e.get("candidate") or {}, e.get("xla") or {}
            lo, hi = rec.get("speedup_ci") or (None, None)
            print(
                f"{kind:<8} {wid:<8} {rec['outcome']:<16} "
                f"{format_speedup(rec.get('speedup'), lo, hi):<22} "
                f"{c.get('max_abs', float('nan')):>9.4f} {x.get('max_abs', float('nan')):>9.4f} "
                f"{str(c.get('n_beyond_tol', '-')) + '/' + str(x.get('n_beyond_tol', '-')):>15} "
                f"{_share(rec):>10} {_reached(rec):>12} {wall:>7.1f}  {name}"
                + (f"  (timed again for load x{len(rec['load_retries'])})" if rec.get("load_retries") else "")
                + _neighbours(rec),
                flush=True,
            )
            if not rec["outcome"].startswith("correct_"):
                print("         " + rec["message"][:300].replace("\n", " "))
    print(f"(total {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
