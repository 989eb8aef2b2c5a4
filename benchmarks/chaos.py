"""Chaos run: faults injected under a working production configuration never decide a verdict.

Runs the production configuration (PostgreSQL + Redis, or PostgreSQL + RabbitMQ) with a TCP
proxy in front of PostgreSQL that this script can cut, one real worker (``manage.py rundramatiq``,
2 threads) whose database connections go through the proxy, and a few hundred evaluation rows:
agent-like traces over 12p, 8p and 41k (correct, incorrect, compile-error and rejected samples,
a third of them identical to an earlier sample so that verdicts are reused) plus a trace for
``tpu-v6e``, a hardware with no worker. The same inputs run twice, on a fresh database and a
fresh broker each time: once without faults, once with these, in order, while rows run:

1. every sandbox child SIGKILLed (an outside signal: the row is retried, not the candidate's);
2. the worker SIGKILLed and started again (its rows come back when their lease expires);
3. the broker flushed (every waiting message gone: the reconciler re-sends one per row);
4. the database unreachable for 30 s (shorter than the lease: no verdict may be measured twice);
5. the database unreachable for longer than the lease.

It prints what each fault did and, at the end: rows by final state (each row final exactly once:
a verdict never changes once seen), attempts, verdicts compared with the fault-free run, the peak
messages per row and per waiting row, and the worker's log lines per second during each outage.

    python benchmarks/chaos.py --config postgres-redis|postgres-rabbitmq [--traces 4] [--samples 60]
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import logging
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
PY = sys.executable
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
DB_NAMES = {"postgres-redis": "jaxbench_chaos_redis", "postgres-rabbitmq": "jaxbench_chaos_rabbitmq"}
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/12"
REDIS_URL = DEFAULT_REDIS_URL  # --redis
VHOST = "jaxbench-chaos"
AMQP_URL = f"amqp://guest:guest@127.0.0.1:5672/{VHOST}"
WORKLOADS = ("12p", "8p", "41k")
LEASE_S = 60  # a 30 s outage is shorter than the time a measured verdict is kept (2/3 of it)
LONG_OUTAGE_S = LEASE_S + 15


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- the TCP proxy


class Proxy:
    """127.0.0.1:<port> -> PostgreSQL. ``cut()`` drops every connection and refuses new ones
    (accepted, then closed at once: what a client sees of a database host that went away)."""

    def __init__(self, target=("127.0.0.1", 5432)):
        self.target = target
        self.port = free_port()
        self.up = True
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._srv = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    def _accept(self):
        while True:
            client, _ = self._srv.accept()
            if not self.up:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self):
        self.up = False
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass

    def restore(self):
        self.up = True


# --------------------------------------------------------------------------- services


def pg(sql: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(sql)


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=120)


def fresh_services(config: str) -> None:
    if "django" in sys.modules:
        from django.db import connections

        connections.close_all()
    pg(f"DROP DATABASE IF EXISTS {DB_NAMES[config]} WITH (FORCE)")
    pg(f"CREATE DATABASE {DB_NAMES[config]}")
    if config == "postgres-redis":
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
    else:
        subprocess.run(["rabbitmqctl", "delete_vhost", VHOST], capture_output=True, timeout=120)
        rabbitmqctl("add_vhost", VHOST)
        rabbitmqctl("set_permissions", "-p", VHOST, "guest", ".*", ".*", ".*")


def drop_services(config: str) -> None:
    from django.db import connections

    connections.close_all()
    pg(f"DROP DATABASE IF EXISTS {DB_NAMES[config]} WITH (FORCE)")
    if config == "postgres-rabbitmq":
        subprocess.run(["rabbitmqctl", "delete_vhost", VHOST], capture_output=True, timeout=120)


def flush_broker(config: str) -> int:
    """Every message the broker holds, gone (Redis: FLUSHDB; RabbitMQ: every queue purged)."""
    if config == "postgres-redis":
        import redis

        r = redis.Redis.from_url(REDIS_URL)
        n = sum(int(r.llen(k)) for k in r.scan_iter("dramatiq:*") if r.type(k) == b"list")
        r.flushdb()
        return n
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(AMQP_URL))
    ch = conn.channel()
    n = 0
    for q in queue_names():
        for name in (q, f"{q}.DQ"):
            try:
                n += int(ch.queue_purge(name).method.message_count)
            except Exception:  # noqa: BLE001 - a queue nobody declared yet
                ch = conn.channel()
    conn.close()
    return n


def queue_names() -> list[str]:
    return ["eval.cpu", "precheck", "maintenance", "eval.tpu-v6e"]


# --------------------------------------------------------------------------- the worker


class Worker:
    def __init__(self, env: dict, log_path: pathlib.Path):
        self.env, self.log_path, self.proc = env, log_path, None

    def start(self):
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [PY, "manage.py", "rundramatiq", "--processes", "1", "--threads", "2", "--worker-shutdown-timeout", "5000"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)

    def lines(self) -> int:
        with open(self.log_path, errors="replace") as f:
            return sum(1 for _ in f)

    def sandbox_children(self) -> list[int]:
        """The worker's sandboxed children (busy or warm): its descendants running the sandbox child."""
        if not self.proc or self.proc.poll() is not None:
            return []
        parent, cmd = {}, {}
        for d in pathlib.Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                stat = (d / "stat").read_text()
                parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
                cmd[int(d.name)] = (d / "cmdline").read_bytes().split(b"\0")
            except (OSError, ValueError, IndexError):
                continue
        out = []
        for pid, argv in cmd.items():
            if not any(a.endswith((b"child_main.py", b"sandbox_child.py")) for a in argv) or argv[0].endswith(b"bwrap"):
                continue
            p = pid
            while p > 1 and p != self.proc.pid:
                p = parent.get(p, 1)
            if p == self.proc.pid:
                out.append(pid)
        return out


# --------------------------------------------------------------------------- inputs


def traces(n_traces: int, samples: int) -> list[tuple[str, str]]:
    """(hardware, trace text) for each trace: deterministic, so both runs get the same inputs."""
    from jaxbench import traces as trace_format
    from jaxbench.kernels import examples
    from portal.demo import broken_variants

    variants = {wid: [code for _note, code in broken_variants(wid, examples.source(wid))] for wid in WORKLOADS}
    out = []
    for t in range(n_traces + 1):
        hw = "tpu-v6e" if t == n_traces else "cpu"
        n = samples if hw == "cpu" else 20
        lines = [
            {
                "format": trace_format.FORMAT,
                "method": f"chaos trace {t}",
                "model": "none",
                "hardware": hw,
                "sampling": "independent",
            }
        ]
        for i in range(n):
            wid = WORKLOADS[i % len(WORKLOADS)]
            code = variants[wid][(i // len(WORKLOADS)) % 4]
            # a third of the samples repeat an earlier one's code exactly (reused verdicts)
            tag = f"\n# trace {t} sample {i - 3 if i % 3 == 2 and i >= 3 else i}\n"
            lines.append({"workload": wid, "index": i // len(WORKLOADS), "code": code + tag})
        out.append((hw, trace_format.dumps_lines(lines)))
    return out


def submit_inputs(inputs) -> list[int]:
    from django.contrib.auth import get_user_model

    from submissions import intake
    from submissions.models import Membership, Team

    user = get_user_model().objects.create(username="chaos")
    team = Team.objects.create(name="chaos")
    Membership.objects.create(team=team, user=user, role=Membership.OWNER)
    return [
        intake.create_trace_submission(team, user, io.BytesIO(text.encode()), upload_key=f"chaos-{i}").pk
        for i, (_hw, text) in enumerate(inputs)
    ]


# --------------------------------------------------------------------------- observation


class Monitor:
    """Samples the rows (directly, not through the proxy) and the broker's messages each second."""

    def __init__(self, config: str):
        self.config = config
        self.first_final: dict[int, tuple] = {}  # row -> (state, outcome, finished_at) first seen final
        self.changed_after_final: set[int] = set()
        self.peak_per_row = 0  # Redis: the most messages the broker held for one row at once
        self.peak_per_waiting_row = 0.0  # messages alive / rows queued or running, per queue
        self.peak_messages = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="monitor")

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(30)

    def _loop(self):
        from django.db import close_old_connections

        while not self._stop.wait(1.0):
            try:
                self.sample()
            except Exception as exc:  # noqa: BLE001 - keep observing; a sample may race a flush
                print(f"  (monitor: {type(exc).__name__}: {exc})", flush=True)
            finally:
                close_old_connections()

    def sample(self):
        from evaluator.models import Evaluation
        from evaluator.queues import stage_queue

        waiting = collections.Counter()  # rows whose message is alive: queued or running
        for pk, state, outcome, finished, stage, hw in Evaluation.objects.values_list(
            "pk", "state", "outcome", "finished_at", "stage", "hardware__slug"
        ):
            if state in Evaluation.FINAL_STATES:
                seen = self.first_final.setdefault(pk, (state, outcome, finished))
                if seen != (state, outcome, finished):
                    self.changed_after_final.add(pk)
            else:
                waiting[stage_queue(stage, hw)] += 1
                if pk in self.first_final:
                    self.changed_after_final.add(pk)
        per_queue = self.broker_messages()
        total = sum(len(v) if isinstance(v, list) else v for v in per_queue.values())
        self.peak_messages = max(self.peak_messages, total)
        for q, msgs in per_queue.items():
            n = len(msgs) if isinstance(msgs, list) else msgs
            if waiting[q]:
                self.peak_per_waiting_row = max(self.peak_per_waiting_row, n / waiting[q])
            if isinstance(msgs, list) and msgs:
                self.peak_per_row = max(self.peak_per_row, max(collections.Counter(msgs).values()))

    def broker_messages(self) -> dict:
        """Redis: {queue: [row id of each message alive]}; RabbitMQ: {queue: messages waiting}."""
        if self.config == "postgres-redis":
            import redis

            r = redis.Redis.from_url(REDIS_URL)
            out = {}
            for q in queue_names():
                rows = []
                for name in (q, f"{q}.DQ"):
                    ids = [*r.lrange(f"dramatiq:{name}", 0, -1)]
                    for ack in r.scan_iter(f"dramatiq:__acks__.*.{name}"):
                        ids += list(r.smembers(ack))
                    for raw in r.hmget(f"dramatiq:{name}.msgs", ids) if ids else []:
                        if raw:
                            m = json.loads(raw)
                            if m.get("actor_name") == "evaluate":
                                rows.append(m["args"][0])
                out[q] = rows
            return out
        import pika

        conn = pika.BlockingConnection(pika.URLParameters(AMQP_URL))
        out = {}
        try:
            for q in queue_names():
                n = 0
                for name in (q, f"{q}.DQ"):
                    ch = conn.channel()
                    try:
                        n += int(ch.queue_declare(name, passive=True).method.message_count)
                    except Exception:  # noqa: BLE001 - not declared yet
                        pass
                out[q] = n
        finally:
            conn.close()
        return out


# --------------------------------------------------------------------------- one run


def rows_snapshot(sub_ids):
    from evaluator.models import Evaluation

    return {
        (e.candidate.submission_id, e.candidate.workload.wid, e.candidate.index, e.stage): e
        for e in Evaluation.objects.filter(candidate__submission_id__in=sub_ids).select_related(
            "candidate__workload", "hardware"
        )
    }


def running_ids() -> list[int]:
    from evaluator.models import Evaluation

    return list(Evaluation.objects.filter(state=Evaluation.RUNNING).values_list("pk", flat=True))


def wait_until(pred, timeout: float, what: str, poll: float = 0.5):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(poll)
    print(f"  (gave up waiting for {what} after {timeout:.0f} s)", flush=True)
    return False


def all_final(sub_ids) -> bool:
    from evaluator.models import Evaluation

    rows = Evaluation.objects.filter(candidate__submission_id__in=sub_ids).exclude(
        stage=Evaluation.MAIN, hardware__slug="tpu-v6e"
    )
    pending = rows.exclude(state__in=Evaluation.FINAL_STATES).exists()
    prechecks_done = not Evaluation.objects.filter(
        candidate__submission_id__in=sub_ids, stage=Evaluation.PRECHECK
    ).exclude(state__in=Evaluation.FINAL_STATES)
    return not pending and prechecks_done


def run_once(config: str, args, inputs, var: pathlib.Path, proxy: Proxy, faults: bool) -> dict:
    label = "with faults" if faults else "fault-free"
    print(f"\n== {config}, {label} ==", flush=True)
    fresh_services(config)
    direct = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAMES[config]}"}
    subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=direct, check=True)
    subprocess.run([PY, "manage.py", "sync_registry"], cwd=ROOT, env=direct, check=True, capture_output=True)
    worker_env = {
        **direct,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{proxy.port}/{DB_NAMES[config]}",
        "PYTHONUNBUFFERED": "1",
        "JAXBENCH_LEASE_SECONDS": str(LEASE_S),
        "JAXBENCH_RECONCILE_INTERVAL_SECONDS": "5",
        "JAXBENCH_RECONCILE_STALE_SECONDS": "10",
    }
    log_path = var / f"worker-{config}-{'faults' if faults else 'clean'}.log"
    log_path.write_text("")
    worker = Worker(worker_env, log_path)
    monitor = Monitor(config)
    t0 = time.monotonic()
    sub_ids = submit_inputs(inputs)
    worker.start()
    monitor.start()
    outages = []
    fault_rows: dict[str, list[int]] = {}

    def at(t):
        time.sleep(max(0.0, t0 + t - time.monotonic()))

    def now():
        return time.monotonic() - t0

    if faults:
        wait_until(lambda: worker.sandbox_children() and running_ids(), 240, "a running evaluation")
        at(max(now(), 20))
        running = running_ids()
        kids = worker.sandbox_children()
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        fault_rows["child SIGKILL"] = running
        print(
            f"[{now():5.0f} s] child SIGKILL: {len(kids)} sandbox children killed; rows running: {running}", flush=True
        )

        at(now() + 25)
        wait_until(running_ids, 120, "a running evaluation")
        running = running_ids()
        worker.kill()
        fault_rows["worker SIGKILL"] = running
        print(f"[{now():5.0f} s] worker SIGKILL (process group); rows running: {running}; started again", flush=True)
        worker.start()

        at(now() + 35)
        n = flush_broker(config)
        print(f"[{now():5.0f} s] broker flushed: {n} waiting messages gone", flush=True)

        for seconds in (30, LONG_OUTAGE_S):
            at(now() + 25)
            wait_until(running_ids, 120, "a running evaluation")
            running = running_ids()
            lines = worker.lines()
            start = now()
            proxy.cut()
            time.sleep(seconds)
            proxy.restore()
            rate = (worker.lines() - lines) / seconds
            outages.append((seconds, rate))
            fault_rows[f"database away {seconds} s"] = running
            print(
                f"[{start:5.0f} s] database unreachable for {seconds} s (lease {LEASE_S} s); rows running: "
                f"{running}; worker log {rate:.2f} lines/s meanwhile",
                flush=True,
            )
    ok = wait_until(lambda: all_final(sub_ids), args.timeout, "every row final", poll=2)
    elapsed = now()
    time.sleep(3)  # one more monitor sample of the final states
    monitor.stop()
    worker.kill(signal.SIGTERM)
    rows = rows_snapshot(sub_ids)
    print(f"[{elapsed:5.0f} s] {'every row final' if ok else 'NOT every row final'}", flush=True)
    return {
        "rows": {k: (e.pk, e.state, e.outcome, e.attempts, bool(e.reused_from_id), e.record) for k, e in rows.items()},
        "monitor": monitor,
        "outages": outages,
        "fault_rows": fault_rows,
        "elapsed": elapsed,
        "log": log_path,
    }


# --------------------------------------------------------------------------- report


def kind(outcome: str) -> str:
    return "correct" if outcome.startswith("correct") else outcome


def report(config: str, clean: dict, chaos: dict) -> None:
    from evaluator.models import Evaluation

    print(f"\n== {config}: the run with faults, against the fault-free run ==")
    rows = chaos["rows"]
    states = collections.Counter((k[3], v[1]) for k, v in rows.items())
    print("rows by final state:", ", ".join(f"{stage} {state} {n}" for (stage, state), n in sorted(states.items())))
    waiting_tpu = sum(1 for k, v in rows.items() if v[1] == Evaluation.QUEUED)
    print(f"  (queued: {waiting_tpu}, the tpu-v6e rows, which have no worker and wait for one)")
    mon = chaos["monitor"]
    print(
        f"each row final exactly once: {len(mon.first_final)} rows seen final, "
        f"{len(mon.changed_after_final)} changed after that"
    )
    attempts = collections.Counter(v[3] for v in rows.values())
    clean_attempts = collections.Counter(v[3] for v in clean["rows"].values())
    print(
        "attempts (rows by attempts):",
        dict(sorted(attempts.items())),
        " fault-free:",
        dict(sorted(clean_attempts.items())),
    )
    infra = [v for v in rows.values() if (v[5] or {}).get("infrastructure_attempts")]
    print(f"verdicts that are a repeated outside death: {len(infra)}")
    same = differ = flips = 0
    diffs = []
    for k, v in rows.items():
        c = clean["rows"].get(k)
        if c is None or v[1] not in Evaluation.FINAL_STATES:
            continue
        if (c[1], kind(c[2])) == (v[1], kind(v[2])):
            same += 1
            flips += c[2] != v[2]
        else:
            differ += 1
            # each side's own reason, so that a difference can be told apart from a fault
            why = [((r[5] or {}).get("error_category"), ((r[5] or {}).get("message") or "")[:300]) for r in (c, v)]
            diffs.append((k, c[1:3], v[1:3], why))
    print(
        f"verdicts vs the fault-free run: {same} identical, {differ} different "
        f"({flips} correct rows whose faster/slower label differs: timing, not faults)"
    )
    for d in diffs[:10]:
        print("   differs:", d)
    for fault, ids in chaos["fault_rows"].items():
        got = [(v[1], v[2], v[3]) for v in rows.values() if v[0] in ids]
        print(f"rows running at '{fault}': {got}")
    if mon.peak_per_row or config == "postgres-redis":
        print(f"peak messages per row (broker contents, by row id): {mon.peak_per_row}")
    print(
        f"peak messages per unfinished row (alive / queued or running, per queue): "
        f"{mon.peak_per_waiting_row:.2f}; peak messages: {mon.peak_messages}"
    )
    for seconds, rate in chaos["outages"]:
        print(f"log lines per second during the {seconds} s database outage: {rate:.2f}")
    print(f"time to every row final: fault-free {clean['elapsed']:.0f} s, with faults {chaos['elapsed']:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", choices=["postgres-redis", "postgres-rabbitmq"], required=True)
    ap.add_argument("--traces", type=int, default=4, help="cpu traces (a tpu-v6e trace of 20 is added)")
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--redis", default=DEFAULT_REDIS_URL, help="the Redis database to use and flush (postgres-redis)")
    ap.add_argument("--keep", action="store_true", help="keep the worker logs (printed path)")
    args = ap.parse_args()
    global REDIS_URL
    REDIS_URL = args.redis
    var = pathlib.Path(tempfile.mkdtemp(prefix="jxb-chaos-"))
    for k in ("PYTEST_VERSION", "JAXBENCH_WORKER_QUEUES", "JAXBENCH_WORKER_HARDWARE"):
        os.environ.pop(k, None)
    os.environ.update(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAMES[args.config]}",
        DRAMATIQ_BROKER_URL=REDIS_URL if args.config == "postgres-redis" else AMQP_URL,
        JAXBENCH_VAR_DIR=str(var),
        JAXBENCH_DEMO="0",
        DJANGO_SETTINGS_MODULE="portal.settings",
    )
    sys.path.insert(0, str(ROOT))
    fresh_services(args.config)  # the settings' broker must exist before Django connects to it
    import django

    django.setup()
    logging.getLogger("pika").setLevel(logging.WARNING)  # the monitor connects every second
    inputs = traces(args.traces, args.samples)
    print(
        f"inputs: {args.traces} cpu traces of {args.samples} samples over {', '.join(WORKLOADS)} "
        f"and a tpu-v6e trace of 20; lease {LEASE_S} s; worker: 1 process, 2 threads; logs in {var}"
    )
    proxy = Proxy()
    try:
        clean = run_once(args.config, args, inputs, var, proxy, faults=False)
        chaos = run_once(args.config, args, inputs, var, proxy, faults=True)
        report(args.config, clean, chaos)
    finally:
        drop_services(args.config)
        if not args.keep:
            shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
