"""The harness alone on a GPU host (no portal, no database): what the two-process harness does
there, with figures. For a host where the pinned stack cannot be installed (no package index)
but JAX with its CUDA plugin is: only JAX and numpy are needed (``PYTHONPATH=.``).

1. the three GPU (Triton) example kernels (12p, 8p, 1p), ``--repeats`` times each, the Pallas rule
   on: the export child (no device, JAX on cpu) lowers each for CUDA; the timer child compiles,
   checks and times it beside the exported XLA baseline;
2. the XLA reference as a candidate against itself (the rule off), ``--repeats`` times each:
   identical code, so a label of faster or slower is a measurement error.

Prints one line per evaluation (outcome, speedup and interval, both medians, the phases' wall
seconds) and a summary; with ``--json FILE`` also writes every record.

    PYTHONPATH=. python3 benchmarks/gpu_harness.py [--repeats 3] [--profile small] [--any-hardware]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.device_summary import print_summary  # noqa: E402
from catalog.starter import starter_source  # noqa: E402 - plain Python, no Django
from jaxbench import harness, workloads  # noqa: E402
from jaxbench.hardware import detect_in_child  # noqa: E402
from jaxbench.kernels import examples  # noqa: E402
from jaxbench.record import format_speedup  # noqa: E402

WORKLOADS = ("12p", "8p", "1p")


def line(kind, wid, rec, wall):
    p = rec["phases"]
    t, b = rec.get("timing") or {}, rec.get("baseline_timing") or {}
    sp = format_speedup(rec["speedup"], *rec["speedup_ci"]) if rec.get("speedup") else "-"
    kernels = ((rec.get("artifact") or {}).get("kernels") or {}).get("by_target")
    print(
        f"{kind:<9} {wid:<4} {rec['outcome']:<15} {str(rec['error_category'] or ''):<20} {sp:<22} "
        f"cand {1e3 * t.get('median_s', 0):9.4f} ms  xla {1e3 * b.get('median_s', 0):9.4f} ms  "
        f"export {p.get('export_s') or 0:5.2f}s compile {p.get('compile_s') or 0:5.2f}s "
        f"timing {p.get('timing_s') or 0:5.2f}s total {wall:6.1f}s  kernels {kernels}",
        flush=True,
    )
    if not rec["outcome"].startswith("correct_"):
        print("    " + rec["message"][:600].replace("\n", "\n    "), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", default="small")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--any-hardware", action="store_true", help="run on a host without a GPU (a dry run)")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    target = detect_in_child()
    print(f"hardware detected in a child: {target.slug} ({target.platform})", flush=True)
    if target.platform != "gpu" and not args.any_hardware:
        raise SystemExit(f"this check needs a GPU target; this host is {target.slug}")
    print(json.dumps(harness.probe_environment(target.platform), default=str)[:3000], flush=True)
    records = []
    t0 = time.monotonic()
    for kind, require in (("example", True), ("reference", False)):
        for wid in args.workloads.split(","):
            wl = workloads.get(wid)
            code = examples.source(wid, platform=target.platform) if kind == "example" else starter_source(wl)
            for i in range(args.repeats):
                t = time.monotonic()
                rec = harness.evaluate(
                    wid, code + f"\n# repeat {i}\n", profile=args.profile, hardware=target.slug, require_pallas=require
                )
                wall = time.monotonic() - t
                line(kind, wid, rec, wall)
                records.append({**rec, "kind": kind, "wall_s": wall})
    print(f"\nwhole check: {time.monotonic() - t0:.0f} s")
    print_summary(records, ("example", "reference"), identical="reference")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(records, default=str))


if __name__ == "__main__":
    main()
