"""Settings fail fast on bad URLs and switch by environment."""

import os
import subprocess
import sys

import pytest

from jaxbench import environment
from portal.config import ConfigError, broker_config, database_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_database_urls(tmp_path):
    assert database_config(None, tmp_path / "a.db", tmp_path / "t.db")["ENGINE"].endswith("sqlite3")
    pg = database_config("postgres://u:p@db.example:5433/jb", tmp_path / "a", tmp_path / "b")
    assert pg["ENGINE"].endswith("postgresql") and pg["NAME"] == "jb" and pg["PORT"] == 5433
    with pytest.raises(ConfigError, match="not supported"):
        database_config("mysql://x/y", tmp_path / "a", tmp_path / "b")
    with pytest.raises(ConfigError, match="sqlite"):
        database_config("sqlite://relative", tmp_path / "a", tmp_path / "b")


def test_broker_urls(tmp_path):
    assert broker_config(None, tmp_path / "s")["OPTIONS"] == {"unix_socket_path": str(tmp_path / "s")}
    assert broker_config("redis://h:6379/0", tmp_path)["BROKER"].endswith("RedisBroker")
    assert broker_config("amqp://g:g@h:5672/%2F", tmp_path)["BROKER"].endswith("RabbitmqBroker")
    for bad in ("kafka://h", "redis://", "amqp:///x", "nonsense"):
        with pytest.raises(ConfigError):
            broker_config(bad, tmp_path)


def test_a_declared_boolean(monkeypatch):
    monkeypatch.setenv("DJANGO_HTTPS", "yes")
    assert environment.get("DJANGO_HTTPS") is True
    monkeypatch.setenv("DJANGO_HTTPS", "maybe")
    with pytest.raises(ConfigError, match="DJANGO_HTTPS.*not a boolean"):
        environment.get("DJANGO_HTTPS")


@pytest.mark.parametrize(
    "var,value,needle",
    [
        ("DATABASE_URL", "mysql://u@h/db", "DATABASE_URL"),
        ("DRAMATIQ_BROKER_URL", "kafka://h:9092", "DRAMATIQ_BROKER_URL"),
        ("DJANGO_DEBUG", "perhaps", "DJANGO_DEBUG"),
    ],
)
def test_manage_py_fails_fast_with_a_clear_message(var, value, needle):
    env = dict(os.environ, **{var: value})
    r = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode != 0
    assert "jaxbench configuration error" in r.stderr and needle in r.stderr
    assert "Traceback" not in r.stderr
