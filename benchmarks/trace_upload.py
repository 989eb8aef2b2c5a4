"""Benchmark: accept a full-size agent trace through the real intake path.

Builds a ``jaxbench-trace/1`` trace of 144 samples x 50 workloads = 7,200 samples from
realistic ~4 KB Pallas kernel sources (about 30 MB), then uploads it as an API client would:
``POST /api/v1/submissions/trace/`` with a Bearer token and the raw JSON Lines body, through
Django's full request stack into ``submissions.intake.create_trace_submission`` (streaming parse,
validation, one transaction: Submission, 7,200 Candidates in bulk, 7,200 Evaluation rows by
``evaluator.pipeline.schedule_submission``, commit). Prints the seconds and samples/s.

The database is a fresh test database: SQLite by default (a file, WAL, as in the embedded
setup), or PostgreSQL when ``DATABASE_URL`` is given (a ``test_<name>`` database is created and
dropped; the named database itself is not touched). The broker wake-ups sent after the commit
are timed separately (``--broker`` sends them to the configured broker; by default they are
counted but not sent, so the figure is the intake's own).

    python benchmarks/trace_upload.py [--workloads 50] [--samples 144] [--repeat 3] [--path api|intake]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/jaxbench python benchmarks/trace_upload.py

The goal (issue 13): accepted in under 2 s (median) on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxbench import environment  # noqa: E402  (after the path insert)

GOAL_S = 2.0


def kernel_source(rng: random.Random, wid: str, index: int) -> str:
    """A plausible ~4 KB Pallas candidate, different for every sample."""
    bm, bn, bk = (rng.choice([128, 256, 512]) for _ in range(3))
    lines = [
        f'"""Candidate {index} for workload {wid}: a tiled Pallas kernel (block {bm}x{bn}x{bk})."""',
        "import functools",
        "",
        "import jax",
        "import jax.numpy as jnp",
        "from jax.experimental import pallas as pl",
        "from jax.experimental.pallas import tpu as pltpu",
        "",
        f"CONFIG = {{'block_m': {bm}, 'block_n': {bn}, 'block_k': {bk}, 'epsilon': 1e-5}}",
        "",
        "",
        "def _kernel(x_ref, w_ref, o_ref, acc_ref, *, nsteps):",
        "    @pl.when(pl.program_id(2) == 0)",
        "    def _init():",
        "        acc_ref[...] = jnp.zeros_like(acc_ref)",
        "",
        "    acc_ref[...] += jnp.dot(x_ref[...].astype(jnp.float32), w_ref[...].astype(jnp.float32),",
        "                            preferred_element_type=jnp.float32)",
        "",
        "    @pl.when(pl.program_id(2) == nsteps - 1)",
        "    def _done():",
        "        o_ref[...] = acc_ref[...].astype(o_ref.dtype)",
        "",
        "",
        "def _matmul(x, w):",
        "    m, k = x.shape",
        "    _, n = w.shape",
        "    bm, bn, bk = min(CONFIG['block_m'], m), min(CONFIG['block_n'], n), min(CONFIG['block_k'], k)",
        "    grid = (m // bm, n // bn, k // bk)",
        "    return pl.pallas_call(",
        "        functools.partial(_kernel, nsteps=grid[2]),",
        "        grid_spec=pltpu.PrefetchScalarGridSpec(",
        "            num_scalar_prefetch=0, grid=grid,",
        "            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),",
        "                      pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],",
        "            out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),",
        "            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)]),",
        "        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),",
        "        compiler_params=pltpu.CompilerParams(dimension_semantics=('parallel', 'parallel', 'arbitrary')),",
        "    )(x, w)",
        "",
        "",
        "def workload(*inputs):",
        "    x = inputs[0]",
        "    w = inputs[1] if len(inputs) > 1 else jnp.eye(x.shape[-1], dtype=x.dtype)",
        "    lead = x.shape[:-1]",
        "    y = _matmul(x.reshape(-1, x.shape[-1]), w)",
        "    return y.reshape(*lead, y.shape[-1])",
        "",
    ]
    src = "\n".join(lines)
    # the agent's reasoning notes that candidates usually carry, to reach ~4 KB
    notes = []
    while len(src) + sum(len(n) + 1 for n in notes) < 4000:
        notes.append(
            f"# step {len(notes)}: tried block ({rng.choice([64, 128, 256])}, {rng.choice([128, 256, 512])}); "
            f"vmem {rng.randint(1, 64)} MiB, est. {rng.random():.3f} ms, alignment ok={rng.random() > 0.3}"
        )
    return src + "\n" + "\n".join(notes) + "\n"


def build_trace(path: pathlib.Path, wids: list[str], samples: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    outcomes = ["compile_error"] * 5 + [
        "runtime_error",
        "incorrect",
        "correct_slower",
        "correct_tie",
        "correct_faster",
        "api_error",
    ]
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {
                    "format": "jaxbench-trace/1",
                    "method": "Iterative refinement + TPU context",
                    "model": "Gemini 3 Flash",
                    "framework": "bench-agent 1.0",
                    "hardware": "cpu",
                    "sampling": "sequential",
                    "budget": samples,
                    "settings": {"temperature": 1.0, "context": "curated TPU notes"},
                }
            )
            + "\n"
        )
        for i in range(samples):  # agents write workloads interleaved, as they run in parallel
            for wid in wids:
                outcome = rng.choice(outcomes)
                speedup = lo = hi = None
                if outcome.startswith("correct"):
                    # the agent's own side-by-side timing: a point and its interval (half of the
                    # agents report one), the outcome it gives
                    speedup = round(rng.uniform(0.5, 2.5) if outcome != "correct_tie" else rng.uniform(0.95, 1.05), 3)
                    if rng.random() < 0.5:
                        half = rng.uniform(0.02, 0.1)
                        lo, hi = round(speedup * (1 - half), 3), round(speedup * (1 + half), 3)
                        outcome = "correct_faster" if lo > 1 else "correct_slower" if hi < 1 else "correct_tie"
                    elif outcome == "correct_tie":
                        outcome = "correct_faster" if speedup > 1 else "correct_slower"
                line = {
                    "workload": wid,
                    "index": i,
                    "round": i,
                    "parent": i - 1 if i else None,
                    "code": "" if outcome == "api_error" else kernel_source(rng, wid, i),
                    "outcome": outcome,
                    "speedup": speedup,
                    "tokens_in": rng.randint(4000, 30000),
                    "tokens_out": rng.randint(300, 3000),
                    "cost_usd": round(rng.uniform(0.001, 0.02), 5),
                }
                if lo is not None:
                    line.update(speedup_lo=lo, speedup_hi=hi)
                f.write(json.dumps(line) + "\n")
    return path.stat().st_size


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", type=int, default=50)
    ap.add_argument("--samples", type=int, default=144, help="samples per workload")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--path",
        choices=["api", "intake"],
        default="api",
        help="api: POST through Django's request stack (default); intake: call the function",
    )
    ap.add_argument("--broker", action="store_true", help="send the wake-ups to the configured broker too")
    ap.add_argument("--keep", action="store_true", help="keep the generated trace file")
    args = ap.parse_args(argv)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="jxb-bench-"))
    if not environment.is_set("DATABASE_URL"):
        os.environ.setdefault("JAXBENCH_VAR_DIR", str(tmp / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise: no collected static here
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    t0 = time.perf_counter()
    old = setup_databases(verbosity=0, interactive=False)
    setup_s = time.perf_counter() - t0
    try:
        return run(args, tmp, setup_s, connection)
    finally:
        teardown_databases(old, verbosity=0)
        if not args.keep:
            for p in tmp.glob("*.jsonl"):
                p.unlink()


def upload_figure(repeat: int = 3) -> dict:
    """Upload the full-size trace ``repeat`` times into the current (already set up) database,
    as benchmarks/leaderboard_load.py does into its filled one; returns the medians."""
    from django.db import connection

    args = argparse.Namespace(
        workloads=50, samples=144, repeat=repeat, path="api", broker=False, keep=False, result=None
    )
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="jxb-bench-"))
    try:
        run(args, tmp, 0.0, connection)
    finally:
        for p in tmp.glob("*.jsonl"):
            p.unlink()
    return args.result or {}


def run(args, tmp, setup_s, connection) -> int:
    from django.contrib.auth import get_user_model

    from catalog.models import Workload
    from catalog.registry_sync import sync_hardware
    from submissions.models import ApiToken, Membership, Team

    sync_hardware()
    ids = [f"{n}p" for n in range(1, 18)] + [f"{n}k" for n in range(18, 51)]
    wids = ids[: args.workloads]
    for wid in wids:
        Workload.objects.get_or_create(
            wid=wid,
            defaults=dict(
                number=int(wid[:-1]),
                slug=f"{wid}-bench",
                public_name=f"{wid}_Bench",
                title=f"Bench {wid}",
                source="maxtext" if wid.endswith("p") else "kernelbench-l2",
                model="bench",
                category="matmul",
                atol=1e-2,
                rtol=1e-2,
            ),
        )
    # (a database filled by an earlier run may hold the bench user and team already)
    user = get_user_model().objects.filter(username="bench").first() or get_user_model().objects.create_user(
        "bench", "bench@example.org", "unused-pw-123"
    )
    team = Team.objects.filter(name="Bench").first() or Team.objects.create(name="Bench")
    Membership.objects.get_or_create(team=team, user=user, defaults={"role": Membership.OWNER})
    _, token = ApiToken.issue(user, "bench")

    path = tmp / "trace.jsonl"
    t0 = time.perf_counter()
    size = build_trace(path, wids, args.samples)
    n = len(wids) * args.samples
    print(
        f"trace: {n} samples ({args.samples} x {len(wids)} workloads), {size / 1e6:.1f} MB, "
        f"{size / n / 1024:.1f} KB per line; built in {time.perf_counter() - t0:.1f}s"
    )
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}), test database set up in {setup_s:.1f}s")

    redis_proc = None
    if args.broker and not environment.is_set("DRAMATIQ_BROKER_URL"):
        from django.conf import settings

        from portal.embedded import start_redis

        redis_proc = start_redis(settings.EMBEDDED_REDIS_SOCKET)
    try:
        return _uploads(args, path, wids, size, n, token, team, user, redis_proc)
    finally:
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(10)


def _uploads(args, path, wids, size, n, token, team, user, redis_proc) -> int:
    """Upload the trace ``--repeat`` times (new upload keys), timing each."""
    from django.db import connection
    from django.test import Client

    import evaluator.pipeline as pipeline
    from evaluator.models import Evaluation
    from submissions import intake
    from submissions.models import Candidate

    sent = {"n": 0, "s": 0.0, "cpu": 0.0}
    real_enqueue = pipeline.enqueue_many

    def timed_enqueue(ids_, queue):
        t, c = time.perf_counter(), time.process_time()
        if args.broker:
            real_enqueue(ids_, queue)
        sent["n"] += len(ids_)
        sent["s"] += time.perf_counter() - t
        sent["cpu"] += time.process_time() - c

    pipeline.enqueue_many = timed_enqueue

    client = Client()
    body = path.read_bytes() if args.path == "api" else None
    # a running server is warm: import the request path once before timing
    warm = client.get("/api/v1/submissions/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert warm.status_code == 200, warm.status_code
    times = []
    for rep in range(args.repeat):
        sent.update(n=0, s=0.0, cpu=0.0)
        key = f"bench-{rep}-{time.time_ns()}"
        t0 = time.perf_counter()
        c0 = time.process_time()
        if args.path == "api":
            r = client.post(
                f"/api/v1/submissions/trace/?upload_key={key}",
                body,
                content_type="application/x-ndjson",
                HTTP_AUTHORIZATION=f"Bearer {token}",
            )
            elapsed = time.perf_counter() - t0
            if r.status_code != 201:
                print(f"upload failed: HTTP {r.status_code} {r.content[:500]!r}")
                return 1
            sid = r.json()["id"]
        else:
            with open(path, "rb") as f:
                sid = intake.create_trace_submission(team, user, f, upload_key=key).pk
            elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0 - sent["cpu"]
        cands = Candidate.objects.filter(submission_id=sid).count()
        evs = Evaluation.objects.filter(candidate__submission_id=sid).count()
        assert cands == n and evs == n, (cands, evs)
        intake_s = elapsed - sent["s"]
        times.append(intake_s)
        broker = (
            f"; wake-ups: {sent['n']} {'sent' if args.broker else 'counted, not sent'} in {sent['s']:.2f}s"
            if sent["n"]
            else ""
        )
        print(
            f"run {rep + 1}: accepted in {intake_s:.2f}s = {n / intake_s:,.0f} samples/s, "
            f"{size / 1e6 / intake_s:.1f} MB/s (this process's CPU: {cpu:.2f}s; {cands} candidates, "
            f"{evs} evaluations){broker}"
        )
    import threading

    for t in threading.enumerate():  # the self-reported summaries built after each upload
        if t.name == "jaxbench-reported-summary":
            t.join(120)
    best, med = min(times), statistics.median(times)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    verdict = "OK" if med < GOAL_S else "SLOWER THAN THE GOAL"
    args.result = {
        "median_s": round(med, 3),
        "best_s": round(best, 3),
        "runs_s": [round(t, 3) for t in times],
        "samples": n,
        "mb": round(size / 1e6, 1),
        "load": round(load, 1),
    }
    print(
        f"trace upload ({args.path}, {connection.vendor}): median {med:.2f}s, best {best:.2f}s for {n} samples "
        f"({n / med:,.0f} samples/s); goal < {GOAL_S:.0f}s: {verdict} [{os.cpu_count()} CPUs, load {load:.1f}]"
    )
    return 0 if med < GOAL_S else 2


if __name__ == "__main__":
    sys.exit(main())
