"""The harness alone on a TPU host (no portal, no database, no sockets): what the two-process
harness does on one chip, with figures. Needs only JAX (with libtpu), numpy, tqdm and, for the
expert kernels, tokamax (``benchmarks/tpu_check.sh`` installs those from carried wheels).

Every honest kernel the project has, each once, through the worker's own warm pool (the device
lock, one chip-holding child at a time): the TPU example kernels, the expert (Tokamax) kernels
and JAX's own TPU kernels wrapped as candidates, the Pallas rule on; then the XLA reference as a
candidate against itself (the rule off), ``--repeats`` times for three workloads: identical code,
so a label of faster or slower is a measurement error; and each of level 2's Pallas baselines as
its own candidate (identical programs again, on the level-2 path); with ``--public-suite DIR``,
each level-2 twin's public file too (its blocks clamped to the small profile by one appended line,
``level2_public.public_candidate``; the only run of a TPU-only twin's file). Prints one line per
evaluation (outcome, speedup and interval, both medians, the sampling width reached, the fraction
of the chip's roofline, the phases) and a summary; every record goes to ``--json`` after each
evaluation, so that a run stopped at its time limit still leaves what it measured. ``--budget``
seconds: no new evaluation starts after it.

    PYTHONPATH=. python3 benchmarks/tpu_harness.py [--profile small] [--repeats 2] [--json F]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time
from collections.abc import Sequence

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.device_summary import print_summary  # noqa: E402
from benchmarks.level2_public import public_candidate  # noqa: E402
from catalog.starter import starter_source  # noqa: E402 - plain Python, no Django
from jaxbench import hardware, harness, workloads  # noqa: E402
from jaxbench.hardware import detect_in_child  # noqa: E402
from jaxbench.kernels import examples, experts, level2  # noqa: E402
from jaxbench.record import format_speedup  # noqa: E402

JAX_CANDIDATES = ROOT / "tests" / "jaxbench" / "kernels" / "jax_candidates"
IDENTICAL = ("12p", "8p", "1p")

# JAX's own figures for the chip, read in a child that keeps off the chip (JAX_PLATFORMS=cpu), to
# set beside hardware.PEAKS: the table the roofline uses is a copy of them.
TPU_INFO = """
import json, sys
from jax.experimental.pallas import tpu as pltpu
chip, cores = sys.argv[1], int(sys.argv[2])
info = pltpu.get_tpu_info_for_chip(pltpu.ChipVersion(chip), cores)
print(json.dumps({k: getattr(info, k) for k in ("bf16_ops_per_second", "mem_bw_bytes_per_second") if hasattr(info, k)}))
"""


def kernels(platform: str, files: Sequence[str] = (), suite: str = ""):
    # --candidate WID=PATH: any file as a candidate (a public baseline.py, say), kind "file"
    for spec in files:
        wid, _, path = spec.partition("=")
        yield "file", wid, pathlib.Path(path).read_text(encoding="utf-8"), True
    # --public-suite DIR: each level-2 twin's public file, its blocks clamped to the small profile
    # as level2_public.py does on the cpu target (the evidence of a TPU-only twin's conformance)
    for wl in workloads.of_level(2) if suite else ():
        try:
            source, digest = public_candidate(wl, pathlib.Path(suite))
        except FileNotFoundError as exc:
            print(f"public    {wl.id:<4} absent: {exc}", flush=True)
            continue
        print(f"public    {wl.id:<4} {wl.upstream.file} sha256 {digest}", flush=True)
        yield "public", wl.id, source, True  # Pallas kernels: the rule on, as level2_public.py runs them
    for wid in examples.EXAMPLES:
        yield "example", wid, examples.source(wid, platform=platform), True
    for wid in experts.EXPERTS:
        yield "expert", wid, experts.source(wid), True
    for p in sorted(JAX_CANDIDATES.glob("*.py")):
        yield "jax", p.name.split("_")[0], p.read_text(), True
    for wid in IDENTICAL:
        yield "identical", wid, starter_source(workloads.get(wid)), False
    # level 2: each Pallas baseline as its own candidate (identical programs: a tie is right)
    for wid in level2.FILES:
        yield "level2", wid, level2.source(wid), True
    # level 1's examples of the tasks level 2 repeats, against the Pallas baselines
    for wid in examples.EXAMPLES:
        if f"l2-{wid}" in level2.FILES:
            yield "l2-ex", f"l2-{wid}", examples.source(wid, platform=platform), True


def line(kind: str, wid: str, rec: dict, wall: float) -> None:
    p = rec.get("phases") or {}
    t, b = rec.get("timing") or {}, rec.get("baseline_timing") or {}
    sp = format_speedup(rec["speedup"], *rec["speedup_ci"]) if rec.get("speedup") else "-"
    res = rec.get("resolution") or {}
    reached = f"+-{100 * res['halfwidth']:.1f}% r{res.get('rounds')}" if res.get("halfwidth") is not None else "-"
    roof = rec.get("roofline") or {}
    frac = None
    if roof.get("time_s") and t.get("median_s"):
        frac = roof["time_s"] / t["median_s"]
    print(
        f"{kind:<9} {wid:<4} {rec['outcome']:<15} {str(rec.get('error_category') or ''):<18} {sp:<22} "
        f"cand {1e3 * (t.get('median_s') or 0):9.4f} ms  xla {1e3 * (b.get('median_s') or 0):9.4f} ms  "
        f"{reached:<11} limit {'-' if frac is None else f'{100 * frac:5.1f}%'}  "
        f"compile {p.get('compile_s') or 0:5.2f}s timing {p.get('timing_s') or 0:5.2f}s total {wall:6.1f}s",
        flush=True,
    )
    if not rec["outcome"].startswith("correct_"):
        print("    " + (rec.get("message") or "")[:500].replace("\n", "\n    "), flush=True)
    for c in rec.get("configurations") or ():  # a multi-configuration workload: each configuration
        csp = format_speedup(c["speedup"], *c["speedup_ci"]) if c.get("speedup") and c.get("speedup_ci") else "-"
        print(f"    {c.get('name', '?'):<16} {c.get('outcome', '?'):<15} {csp}", flush=True)


def peaks_check(target) -> None:
    peaks = hardware.PEAKS.get(target.slug)
    if target.slug not in hardware.TPU_CHIPS:
        print(f"no TPU chip entry for {target.slug}")
        return
    chip, cores = hardware.TPU_CHIPS[target.slug]
    got = subprocess.run(
        [sys.executable, "-c", TPU_INFO, chip, str(cores)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"},
        timeout=120,
    )
    print(f"JAX's TPU info for {chip} x{cores}: {got.stdout.strip() or got.stderr.strip()[-300:]}")
    if peaks:
        print(f"hardware.PEAKS[{target.slug}]: {peaks.flops:.3g} FLOP/s, {peaks.bandwidth:.3g} B/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="small")
    ap.add_argument("--repeats", type=int, default=2, help="identical-code evaluations per workload")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated kinds (example,expert,jax,identical,level2,l2-ex,file,public) or kind:workload "
        "(expert:8p)",
    )
    ap.add_argument(
        "--public-suite",
        default="",
        metavar="DIR",
        help="also evaluate each level-2 twin's public file from DIR/JAXBench/benchmark/level2/ (kind public)",
    )
    ap.add_argument(
        "--candidate",
        action="append",
        default=[],
        metavar="WID=PATH",
        help="also evaluate the file PATH as a candidate for workload WID (kind file); repeatable",
    )
    ap.add_argument("--budget", type=float, default=480.0, help="seconds after which no evaluation starts")
    ap.add_argument("--any-hardware", action="store_true", help="run on a host without a TPU (a dry run)")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    t0 = time.monotonic()
    target = detect_in_child()
    print(f"hardware detected in a child: {target.slug} ({target.platform})", flush=True)
    if target.platform != "tpu" and not args.any_hardware:
        raise SystemExit(f"this check needs a TPU target; this host is {target.slug}")
    peaks_check(target)
    print(json.dumps(harness.probe_environment(target.platform), default=str)[:3000], flush=True)
    only = set(filter(None, args.only.split(",")))
    records: list[dict] = []
    skipped: list[str] = []
    with harness.WarmPool(target.platform) as pool:
        for kind, wid, code, require in kernels(target.platform, args.candidate, args.public_suite):
            if only and kind not in only and f"{kind}:{wid}" not in only:
                continue
            for i in range(args.repeats if kind == "identical" else 1):
                if time.monotonic() - t0 > args.budget:
                    skipped.append(f"{kind} {wid}")
                    continue
                t = time.monotonic()
                try:
                    rec = pool.evaluate(
                        wid,
                        code + f"\n# repeat {i}\n",
                        profile=args.profile,
                        hardware=target.slug,
                        require_pallas=require,
                    )
                except harness.InfrastructureError as exc:
                    print(f"{kind:<9} {wid:<4} (harness error) {exc!s:.400}", flush=True)
                    records.append({"kind": kind, "workload": wid, "harness_error": str(exc)[:2000]})
                    continue
                wall = time.monotonic() - t
                line(kind, wid, rec, wall)
                records.append({**rec, "kind": kind, "wall_s": wall})
                if args.json:
                    pathlib.Path(args.json).write_text(json.dumps(records, default=str))
    summary(records, skipped, time.monotonic() - t0)


def summary(records: list[dict], skipped: list[str], total: float) -> None:
    print(f"\nwhole check: {total:.0f} s; not started (budget): {', '.join(skipped) or 'none'}")
    print_summary(records, ("example", "expert", "jax", "identical"), identical="identical")
    print_summary(records, ("level2",), identical="level2")
    print_summary(records, ("l2-ex",), identical="")
    print_summary(records, ("file",), identical="")
    print_summary(records, ("public",), identical="")


if __name__ == "__main__":
    main()
