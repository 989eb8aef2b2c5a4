"""Compile time and run time of every workload's jitted XLA baseline at the small profile.

    .venv/bin/python benchmarks/workloads_small.py [--repeats 5] [--json] [ID ...]

Prints one row per workload: input creation time (jitted, as the harness creates inputs; the
first call, so compilation included), the baseline's compile time (trace + lower + compile),
and the median / minimum of the timed runs (each blocked on the whole output, after one
warm-up run). Rows whose median run time is over the limit (1 s: the small profile is meant
to run in about a second on a 2-core CPU) are flagged with "SLOW"; the exit status is 1 if any
row is flagged or fails.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

LIMIT_S = 1.0


def measure(wl, repeats: int) -> dict:
    import jax

    create = jax.jit(lambda key: tuple(wl.create_inputs("small", key)))
    t0 = time.perf_counter()
    inputs = jax.block_until_ready(create(jax.random.key(0)))
    t_inputs = time.perf_counter() - t0

    t0 = time.perf_counter()
    compiled = jax.jit(wl.baseline("small")).lower(*inputs).compile()
    t_compile = time.perf_counter() - t0

    jax.block_until_ready(compiled(*inputs))  # warm-up
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*inputs))
        runs.append(time.perf_counter() - t0)
    return {
        "id": wl.id,
        "slug": wl.slug,
        "inputs_s": t_inputs,
        "compile_s": t_compile,
        "median_s": statistics.median(runs),
        "min_s": min(runs),
        "repeats": repeats,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="workload IDs, slugs or public names")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--limit", type=float, default=LIMIT_S, help="flag median run times above this many seconds")
    parser.add_argument("--json", action="store_true", help="print JSON lines instead")
    args = parser.parse_args(argv)

    import jax

    from jaxbench import workloads

    wls = [workloads.get(i) for i in args.ids] if args.ids else workloads.all_workloads()
    if not args.json:
        print(
            f"JAX {jax.__version__} on {jax.devices()[0].platform}, "
            f"{args.repeats} timed runs after one warm-up; flag: median > {args.limit:g} s"
        )
        print(f"{'id':>4}  {'slug':<58} {'inputs':>8} {'compile':>8} {'median':>9} {'min':>9}")
    bad = 0
    for wl in wls:
        try:
            row = measure(wl, args.repeats)
        except Exception as exc:  # noqa: BLE001 - report and go on with the other workloads
            bad += 1
            row = {"id": wl.id, "slug": wl.slug, "error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(row) if args.json else f"{wl.id:>4}  {wl.slug:<58} ERROR {row['error'][:200]}", flush=True)
            continue
        row["slow"] = row["median_s"] > args.limit
        bad += row["slow"]
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"{row['id']:>4}  {row['slug']:<58} {row['inputs_s']:7.3f}s "
                f"{row['compile_s']:7.3f}s {row['median_s'] * 1e3:7.1f}ms "
                f"{row['min_s'] * 1e3:7.1f}ms{'  SLOW' if row['slow'] else ''}",
                flush=True,
            )
    if not args.json:
        print(f"{len(wls)} workloads, {bad} flagged or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
