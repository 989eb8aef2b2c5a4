"""End-to-end throughput of the evaluation pipeline on the embedded portal.

Starts the embedded portal (``manage.py runportal``: embedded Redis, one worker, gunicorn) in a
fresh var directory, submits N candidates (default 200: a mix of correct, incorrect and failing
kernels at the small profile, each made unique so none is reused) as one trace through the REST
API, waits until every evaluation is final, and prints:

* candidates per minute end to end (first enqueue to last verdict);
* the median and p95 queue latency (enqueue to claim);
* the harness's own time for the same candidates back to back (the sum of the records' total
  time, measured inside the worker) and the share the pipeline adds on top of it (target < 10%).

The worker runs ``--threads`` threads (default 2); ``--db postgres-redis`` runs the same against
a fresh PostgreSQL database and a Redis database on the local services instead of the embedded
SQLite + Redis (the database is created and dropped here, the Redis database flushed).

    python benchmarks/pipeline_throughput.py [--count 200] [--threads 2] [--db embedded|postgres-redis] [--keep]
"""

import argparse
import json
import os
import pathlib
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
PY = sys.executable
EXAMPLE = (ROOT / "jaxbench" / "kernels" / "examples" / "12p-rmsnorm.py").read_text()
VARIANTS = [
    ("correct", EXAMPLE),
    # wrong by a scaled weight vector (a few FLOPs outside Pallas, well under the 10% rule)
    ("incorrect", EXAMPLE + "\n\n_k = workload\n\ndef workload(x, scale):\n    return _k(x, scale * 1.5)\n"),
    ("compile_error", "from jax.experimental import pallas as pl\n\ndef workload(x, scale):\n    return pl.nope(x)\n"),
    ("rejected", "def workload(x, scale):\n    return (x.astype('float32') * 0 + 1).astype(x.dtype) * scale\n"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env, *args, input_text=None):
    return subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=env, check=True, text=True, capture_output=True, input=input_text
    ).stdout


def api(base, token, path, data=None, content_type="application/json"):
    req = urllib.request.Request(
        base + path, data=data, headers={"Authorization": f"Bearer {token}", "Content-Type": content_type}
    )
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read().decode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=7200)
    ap.add_argument("--keep", action="store_true", help="keep the temporary var directory")
    ap.add_argument("--threads", type=int, default=2, help="worker threads")
    ap.add_argument("--db", choices=["embedded", "postgres-redis"], default="embedded")
    ap.add_argument(
        "--pg",
        default="postgres://postgres@127.0.0.1:5432/postgres",
        help="an existing PostgreSQL database to create the bench database from",
    )
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/14", help="a Redis database to use and flush")
    ap.add_argument("--json", help="also write the figures here (benchmarks/leaderboard_load.py --pipeline reads them)")
    args = ap.parse_args()
    var = pathlib.Path(tempfile.mkdtemp(prefix="jxb-throughput-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DRAMATIQ_BROKER_URL", "PYTEST_VERSION")}
    env.update(
        JAXBENCH_VAR_DIR=str(var), JAXBENCH_DEMO="0", JAXBENCH_TOKEN_RATE="100000/min", JAXBENCH_UPLOAD_RATE="1000/min"
    )
    pg_db = None
    if args.db == "postgres-redis":
        pg_db = f"jxb_throughput_{os.getpid()}"
        _pg(args.pg, f"CREATE DATABASE {pg_db}")
        env["DATABASE_URL"] = args.pg.rsplit("/", 1)[0] + "/" + pg_db
        env["DRAMATIQ_BROKER_URL"] = args.redis
        _flush_redis(args.redis)
    try:
        run(args, env, var)
    finally:
        if pg_db:
            _pg(args.pg, f"DROP DATABASE IF EXISTS {pg_db} WITH (FORCE)")
        if not args.keep:
            shutil.rmtree(var, ignore_errors=True)


def _pg(url, sql):
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def _flush_redis(url):
    import redis

    redis.Redis.from_url(url).flushdb()


def run(args, env, var):
    manage(env, "migrate", "-v0")
    manage(env, "sync_registry")
    token = (
        manage(
            env,
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import User; from submissions.models import Team, Membership, ApiToken;"
                "u=User.objects.create_user('bench'); t=Team.objects.create(name='bench');"
                "Membership.objects.create(team=t,user=u,role='owner'); print(ApiToken.issue(u,'bench')[1])"
            ),
        )
        .strip()
        .splitlines()[-1]
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            PY,
            "manage.py",
            "runportal",
            "--bind",
            f"127.0.0.1:{port}",
            "--no-demo",
            "--worker-threads",
            str(args.threads),
        ],
        cwd=ROOT,
        env=env,
        stdout=open(var / "portal.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(base + "/", timeout=2)
                break
            except OSError:
                time.sleep(1)
        lines = [
            {
                "format": "jaxbench-trace/1",
                "method": "throughput bench",
                "model": "none",
                "hardware": "cpu",
                "sampling": "independent",
            }
        ]
        kinds = []
        for i in range(args.count):
            kind, code = VARIANTS[i % len(VARIANTS)]
            kinds.append(kind)
            lines.append({"workload": "12p", "index": i, "code": code + f"\n# sample {i}\n"})
        body = "".join(json.dumps(x) + "\n" for x in lines).encode()
        t0 = time.time()
        sub = api(base, token, "/api/v1/submissions/trace/", body, "application/x-ndjson")
        sid = sub["id"]
        while time.time() - t0 < args.timeout:
            st = api(base, token, f"/api/v1/submissions/{sid}/status/")
            prog = st.get("progress", st)
            if prog.get("finished"):
                break
            print(f"\r{prog.get('done', 0)}/{prog.get('total', args.count)} evaluated", end="", flush=True)
            time.sleep(2)
        print()
        rows = json.loads(
            manage(
                env,
                "shell",
                "-c",
                (
                    "import json; from evaluator.models import Evaluation as E;"
                    f"print(json.dumps([[e.enqueued_at.timestamp(), e.started_at.timestamp() if e.started_at else None,"
                    f" e.finished_at.timestamp() if e.finished_at else None, e.outcome, (e.record.get('phases') or {{}}).get('total_s')]"
                    f" for e in E.objects.filter(candidate__submission_id={sid})]))"
                ),
            )
            .strip()
            .splitlines()[-1]
        )
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)
    first_enqueue = min(r[0] for r in rows)
    last_finish = max(r[2] for r in rows if r[2])
    wall = last_finish - first_enqueue
    latencies = sorted(r[1] - r[0] for r in rows if r[1])
    harness_s = sum(r[4] or 0 for r in rows)
    outcomes = {}
    for r in rows:
        outcomes[r[3]] = outcomes.get(r[3], 0) + 1
    print(f"candidates: {len(rows)} ({', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))})")
    print(
        f"end to end ({args.db}): {wall:.1f} s = {60 * len(rows) / wall:.1f} candidates/min "
        f"({args.threads} worker thread{'s' if args.threads != 1 else ''})"
    )
    print(
        f"queue latency (enqueue -> claim): median {statistics.median(latencies):.2f} s, "
        f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.2f} s (includes waiting behind earlier candidates)"
    )
    first_claim = min(r[1] for r in rows if r[1])
    print(f"first claim after upload: {first_claim - first_enqueue:.2f} s")
    print(f"inside the worker, the harness records sum to {harness_s:.1f} s (warm children, startup excluded)")
    # The same candidates through the harness library back to back, as an agent framework would
    # run them locally: one fresh sandboxed child each, the same baseline measured once.
    sys.path.insert(0, str(ROOT))
    from jaxbench import harness

    base = harness.measure_baseline("12p", profile="small", hardware="cpu")
    t = time.time()
    for i in range(len(rows)):
        harness.evaluate(
            "12p", VARIANTS[i % len(VARIANTS)][1] + f"\n# sample {i}\n", profile="small", hardware="cpu", baseline=base
        )
    direct = time.time() - t
    overhead_pct = 100 * (wall / direct - 1)
    print(
        f"harness alone, back to back: {direct:.1f} s; the pipeline ({args.db}, {args.threads} worker threads) "
        f"adds {overhead_pct:.1f}% (target < 10%)"
    )
    if args.json:
        pathlib.Path(args.json).write_text(
            json.dumps(
                {
                    "count": len(rows),
                    "variant": args.db,
                    "threads": args.threads,
                    "end_to_end_s": wall,
                    "harness_in_worker_s": harness_s,
                    "back_to_back_s": direct,
                    "overhead_pct": overhead_pct,
                    "outcomes": outcomes,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
