"""The GPU check: the portal's own pipeline on one GPU host, figures printed.

Starts the embedded configuration (SQLite + embedded Redis) in a fresh var directory and one
worker per phase (it detects its GPU target in a short-lived child; nothing is forced), then:

1. the three GPU (Triton) example candidates (12p, 8p, 1p), ``--repeats`` times each, every
   repeat a distinct file (a comment) so that each is measured, not reused; the Pallas rule on;
2. the XLA reference of the same workloads submitted as a candidate against itself (the rule off
   for that worker only), ``--repeats`` times each: identical code, so a label of faster or
   slower is a measurement error.

Prints per workload: outcomes, the speedups with their intervals, the device-event medians
(the verdict's timing) beside the child's wall-clock medians, how many identical-code runs were
labelled faster or slower, and the wall time per evaluation (claim to verdict).

    python benchmarks/gpu_check.py [--repeats 10] [--timeout 480]   (benchmarks/gpu_check.sh wraps it)
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
PY = sys.executable
WORKLOADS = ("12p", "8p", "1p")


def manage(env, *args):
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True)


def trace(hardware: str, label: str, codes: list[tuple[str, str]]) -> bytes:
    from jaxbench import traces as trace_format

    lines: list[dict] = [
        {
            "format": trace_format.FORMAT,
            "method": f"gpu check: {label}",
            "model": "none",
            "hardware": hardware,
            "sampling": "independent",
        }
    ]
    seen: collections.Counter = collections.Counter()
    for wid, code in codes:
        lines.append({"workload": wid, "index": seen[wid], "code": code})
        seen[wid] += 1
    return trace_format.dumps_lines(lines).encode()


def run_phase(env, label, hardware, codes, require_pallas: bool, timeout: float, var: pathlib.Path):
    from django.contrib.auth import get_user_model

    from evaluator.models import Evaluation
    from submissions import intake
    from submissions.models import Membership, Team

    user, _ = get_user_model().objects.get_or_create(username="gpu-check")
    team, _ = Team.objects.get_or_create(name="gpu check")
    Membership.objects.get_or_create(team=team, user=user, defaults={"role": Membership.OWNER})
    sub = intake.create_trace_submission(team, user, io.BytesIO(trace(hardware, label, codes)), upload_key=label)
    log = open(var / f"worker-{label}.log", "w")
    worker = subprocess.Popen(
        [PY, "manage.py", "rundramatiq", "--processes", "1", "--threads", "1"],
        cwd=ROOT,
        env={**env, "JAXBENCH_REQUIRE_PALLAS": "1" if require_pallas else "0", "PYTHONUNBUFFERED": "1"},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    rows = Evaluation.objects.filter(candidate__submission=sub)
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            left = rows.exclude(state__in=Evaluation.FINAL_STATES).count()
            if not left:
                break
            print(f"\r  {label}: {rows.count() - left}/{rows.count()} evaluated", end="", flush=True)
            time.sleep(2)
        print()
    finally:
        os.killpg(worker.pid, 15)
        worker.wait(60)
    return list(rows.select_related("candidate__workload").order_by("candidate__workload__wid", "candidate__index"))


def fmt_ms(s):
    return "-" if s is None else f"{1000 * s:.3f} ms"


def report(label, rows, identical: bool):
    print(f"\n== {label} ==")
    by_wl = collections.defaultdict(list)
    for r in rows:
        by_wl[r.candidate.workload.wid].append(r)
    for wid in WORKLOADS:
        rs = by_wl.get(wid, [])
        outcomes = collections.Counter(r.outcome or r.state for r in rs)
        print(f"{wid}: {len(rs)} runs; outcomes: {dict(outcomes)}")
        for r in rs:
            rec = r.record or {}
            t, b = rec.get("timing") or {}, rec.get("baseline_timing") or {}
            ci = rec.get("speedup_ci") or [None, None]
            wall = (r.finished_at - r.started_at).total_seconds() if r.finished_at and r.started_at else None
            sp = rec.get("speedup")
            interval = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci[0] is not None else ""
            print(
                f"   #{r.candidate.index:<2} {r.outcome or r.state:<15} "
                + (f"{sp:.3f}x {interval}" if sp is not None else "-")
                + f"  candidate {fmt_ms(t.get('median_s'))} (wall {fmt_ms(t.get('wall_median_s'))}, {t.get('method')})"
                + f"  XLA {fmt_ms(b.get('median_s'))} (wall {fmt_ms(b.get('wall_median_s'))})"
                + (f"  evaluation {wall:.1f} s" if wall is not None else "")
                + (f"  [{(r.message or '')[:120]}]" if not r.outcome.startswith("correct") else "")
            )
        speedups = [r.speedup for r in rs if r.speedup]
        walls = [(r.finished_at - r.started_at).total_seconds() for r in rs if r.finished_at and r.started_at]
        if speedups:
            print(f"   median speedup {statistics.median(speedups):.3f}x over {len(speedups)} correct runs")
        if walls:
            print(f"   wall per evaluation: median {statistics.median(walls):.1f} s, max {max(walls):.1f} s")
        if identical:
            labelled = sum(1 for r in rs if r.outcome in ("correct_faster", "correct_slower"))
            print(f"   identical code labelled faster or slower: {labelled} of {len(rs)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=480, help="seconds per phase")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--any-hardware",
        action="store_true",
        help="run on a non-GPU host too, with that platform's examples (to try the script itself on CPU)",
    )
    args = ap.parse_args()
    var = pathlib.Path(tempfile.mkdtemp(prefix="jxb-gpu-check-"))
    for k in ("DATABASE_URL", "DRAMATIQ_BROKER_URL", "JAXBENCH_WORKER_QUEUES", "PYTEST_VERSION"):
        os.environ.pop(k, None)
    os.environ.update(JAXBENCH_VAR_DIR=str(var), JAXBENCH_DEMO="0", DJANGO_SETTINGS_MODULE="portal.settings")
    env = dict(os.environ)
    sys.path.insert(0, str(ROOT))
    from jaxbench.hardware import detect_in_child
    from portal.embedded import start_redis

    hardware = detect_in_child().slug
    print(f"hardware detected in a child: {hardware}; var {var}")
    if not hardware.startswith("gpu-") and not args.any_hardware:
        raise SystemExit(f"this check needs a GPU target; this host is {hardware}")
    redis_proc = start_redis(var / "redis" / "redis.sock")
    try:
        manage(env, "migrate", "-v0")
        manage(env, "sync_registry")
        import django

        django.setup()
        from catalog.starter import starter_source
        from jaxbench import workloads
        from jaxbench.hardware import TARGETS
        from jaxbench.kernels import examples

        t0 = time.monotonic()
        ex = [
            (wid, examples.source(wid, platform=TARGETS[hardware].platform) + f"\n# repeat {i}\n")
            for wid in WORKLOADS
            for i in range(args.repeats)
        ]
        ex_rows = run_phase(env, "examples", hardware, ex, True, args.timeout, var)
        ref = [(wid, starter_source(workloads.get(wid))) for wid in WORKLOADS for _ in range(args.repeats)]
        # identical code: each repeat measured on its own (the reuse of identical code is what
        # this phase must not use, so each is made distinct by a comment the compiler ignores)
        ref = [(wid, code + f"\n# repeat {i}\n") for i, (wid, code) in enumerate(ref)]
        ref_rows = run_phase(env, "reference", hardware, ref, False, args.timeout, var)
        report(f"examples on {hardware} (Pallas rule on)", ex_rows, identical=False)
        report(f"XLA reference against itself on {hardware}", ref_rows, identical=True)
        print(f"\nwhole check: {time.monotonic() - t0:.0f} s")
        print(
            json.dumps({"hardware": hardware, "sandbox": (ex_rows[0].record or {}).get("sandbox")}, default=str)[:2000]
        )
    finally:
        if redis_proc is not None:
            redis_proc.terminate()
        if not args.keep:
            shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
