"""Shared fixtures. The integration variant (embedded, postgres-redis, postgres-rabbitmq) comes
from JAXBENCH_VARIANT with DATABASE_URL and DRAMATIQ_BROKER_URL (see the Makefile)."""

import os
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from jaxbench import environment

VARIANT = environment.get("JAXBENCH_VARIANT")
LEVEL2_ENV = {"JAXBENCH_EXTRA_WORKLOADS": "tests.level2.w51d_gated_rmsnorm"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _reachable(url: str) -> str | None:
    parts = urlsplit(url)
    default = {"postgres": 5432, "postgresql": 5432, "redis": 6379, "amqp": 5672}.get(parts.scheme)
    try:
        with socket.create_connection((parts.hostname, parts.port or default), timeout=3):
            return None
    except OSError as exc:
        return f"{parts.scheme} at {parts.hostname}:{parts.port or default} unreachable ({exc})"


def pytest_configure(config):
    # the trusted side's compiled programs on disk, shared by the test processes and the next run
    # (the tests compile every workload's inputs and references as the harness does: xla_cache.py)
    import jax

    from jaxbench.harness import xla_cache

    xla_cache.enable(jax)
    if VARIANT == "embedded":
        return
    problems = [
        p
        for p in (_reachable(os.environ[v]) for v in ("DATABASE_URL", "DRAMATIQ_BROKER_URL") if os.environ.get(v))
        if p
    ]
    if problems:
        msg = f"integration variant {VARIANT}: " + "; ".join(problems)
        if os.environ.get("CI") == "true":
            pytest.exit(msg + " — CI requires every variant", returncode=1)
        print(f"\nSKIPPED {msg}\n")
        pytest.exit(f"skipped {msg}", returncode=0)


@pytest.fixture
def level2(monkeypatch):
    """The tests' level-2 workload (tests/level2: 51d, ten configurations) registered in this
    process for the test's length (JAXBENCH_EXTRA_WORKLOADS); a worker the test starts gets the
    variable from ``start_worker(extra_env=LEVEL2_ENV)``."""
    from jaxbench import workloads

    monkeypatch.setenv(workloads.EXTRA_ENV, LEVEL2_ENV[workloads.EXTRA_ENV])
    workloads.reload()
    yield workloads.get("51d")
    monkeypatch.delenv(workloads.EXTRA_ENV)
    workloads.reload()


# embedded Redis servers this session started: stopped with the session (nothing left behind)
_EMBEDDED_REDIS: list[subprocess.Popen] = []


@pytest.fixture(scope="session")
def broker_url():
    """The broker URL workers started by tests use; starts the embedded Redis when needed."""
    url = environment.get("DRAMATIQ_BROKER_URL")
    if url:
        yield url
        return
    from django.conf import settings

    from portal.embedded import start_redis

    proc = start_redis(settings.EMBEDDED_REDIS_SOCKET)
    if proc is not None:
        _EMBEDDED_REDIS.append(proc)
    yield f"unix://{settings.EMBEDDED_REDIS_SOCKET}"
    # the one started here and any a broker-restart test started again (start_broker)
    for p in _EMBEDDED_REDIS:
        if p.poll() is None:
            p.terminate()
            p.wait(10)
    _EMBEDDED_REDIS.clear()


@pytest.fixture
def purge_queues(broker_url):
    import dramatiq

    broker = dramatiq.get_broker()
    for q in list(broker.get_declared_queues()):
        try:
            broker.flush(q)
        except Exception:
            pass
    yield broker


def database_url_for_subprocess() -> str:
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    user = s.get("USER") or ""
    pw = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    at = f"{user}{pw}@" if user else ""
    return f"postgres://{at}{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


class WorkerProcess:
    def __init__(self, proc, log_path):
        self.proc = proc
        self.log_path = log_path

    def log(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-5000:]
        except OSError:
            return ""

    def stop(self, sig=15):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(10)


@pytest.fixture
def start_worker(broker_url, tmp_path):
    """Start real ``manage.py rundramatiq`` worker processes against the test database."""
    workers = []

    def start(queues=("maintenance", "precheck", "eval.cpu"), threads=1, hardware="cpu", extra_env=None):
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": database_url_for_subprocess(),
                "DRAMATIQ_BROKER_URL": broker_url,
                "JAXBENCH_WORKER_QUEUES": ",".join(queues),
                "JAXBENCH_WORKER_HARDWARE": hardware,
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(extra_env or {})
        log_path = tmp_path / f"worker-{len(workers)}.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "manage.py",
                    "rundramatiq",
                    "--processes",
                    "1",
                    "--threads",
                    str(threads),
                    "--worker-shutdown-timeout",
                    "5000",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        w = WorkerProcess(proc, log_path)
        workers.append(w)
        return w

    yield start
    for w in workers:
        w.stop()


def wait_for(predicate, timeout=60.0, interval=0.2, message="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def restart_broker(url: str) -> None:
    """Restart the broker behind ``url`` for real (embedded Redis, Redis service or RabbitMQ)."""
    stop_broker(url)
    start_broker(url)


def stop_broker(url: str) -> None:
    """Stop the broker behind ``url`` (Redis keeps nothing; RabbitMQ keeps durable queues)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        import redis

        try:
            redis.Redis(unix_socket_path=parts.path).shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # shutdown closes the connection under us
    elif parts.scheme in ("redis", "rediss"):
        subprocess.run(
            ["redis-cli", "-h", parts.hostname, "-p", str(parts.port or 6379), "shutdown", "nosave"],
            capture_output=True,
            timeout=30,
        )
    elif parts.scheme in ("amqp", "amqps"):
        subprocess.run(["rabbitmqctl", "stop_app"], check=True, capture_output=True, timeout=120)
    else:
        raise ValueError(f"cannot stop broker {url}")
    time.sleep(0.5)


def start_broker(url: str) -> None:
    """Start the broker behind ``url`` again and wait until it answers."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        from portal.embedded import start_redis

        proc = start_redis(__import__("pathlib").Path(parts.path))
        if proc is not None:
            _EMBEDDED_REDIS.append(proc)
    elif parts.scheme in ("redis", "rediss"):
        subprocess.run(
            [
                "redis-server",
                "--daemonize",
                "yes",
                "--bind",
                "127.0.0.1",
                "-::1",
                "--port",
                str(parts.port or 6379),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                "/var/lib/redis",
                "--logfile",
                "/var/log/redis/ci.log",
            ],
            check=True,
            timeout=30,
        )
        wait_for(lambda: _reachable(url) is None, timeout=30, message="redis back")
    elif parts.scheme in ("amqp", "amqps"):
        subprocess.run(["rabbitmqctl", "start_app"], check=True, capture_output=True, timeout=120)
        wait_for(lambda: _reachable(url) is None, timeout=60, message="rabbitmq back")
    else:
        raise ValueError(f"cannot start broker {url}")
