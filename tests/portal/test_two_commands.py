"""`make run` from a fresh clone: it sets up, serves the portal with a live worker, stops cleanly
on Ctrl-C and keeps its data when run again. (`make test` itself is what CI runs on a clean clone.)"""

import os
import pathlib
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.heavy]
ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def wait_http(url, proc, log, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"make run exited early ({proc.returncode}):\n{log.read_text()[-4000:]}")
        try:
            return fetch(url)
        except OSError:
            time.sleep(1)
    raise AssertionError(f"{url} never answered:\n{log.read_text()[-4000:]}")


def start(clone, env, log):
    return subprocess.Popen(
        ["make", "run"], cwd=clone, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True
    )


def ctrl_c(proc, log):
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("make run did not stop on Ctrl-C:\n" + log.read_text()[-3000:])


def test_make_run_from_a_fresh_clone(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    # The virtual environment is the only thing reused (installing it is what CI's clean clone proves).
    (clone / ".venv").symlink_to(ROOT / ".venv")
    # older than the venv's stamps: make must not reinstall into the shared .venv (its editable
    # install of the harness would then point at this temporary clone)
    for name in ("requirements.txt", "requirements-test.txt"):
        os.utime(clone / name, (0, 0))
    port = free_port()
    var = tmp_path / "var"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_VERSION", "DATABASE_URL", "DRAMATIQ_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(JAXBENCH_BIND=f"127.0.0.1:{port}", JAXBENCH_VAR_DIR=str(var))
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "run1.log"
    proc = start(clone, env, log)
    try:
        status, body = wait_http(base + "/", proc, log, timeout=400)
        assert status == 200 and "JAXBench" in body
        status, body = fetch(base + "/workloads/")
        assert status == 200 and "12p" in body
        status, css = fetch(base + "/static/css/portal.css")
        assert status == 200 and "--accent" in css
        # the worker announced itself: the health page lists it
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _, health = fetch(base + "/health/")
            if "eval.cpu" in health and "No live worker" not in health:
                break
            time.sleep(2)
        else:
            raise AssertionError("no live worker on /health/:\n" + log.read_text()[-3000:])
    finally:
        ctrl_c(proc, log)
    out = log.read_text()
    assert "stopped." in out
    assert (var / "db.sqlite3").exists() and (var / "admin-password.txt").exists()
    password = (var / "admin-password.txt").read_text()
    # nothing left running from this var dir
    leftovers = subprocess.run(["pgrep", "-f", str(var)], capture_output=True, text=True).stdout.strip()
    assert not leftovers, leftovers

    # Run again: the data is kept (same admin, same database).
    log2 = tmp_path / "run2.log"
    proc = start(clone, env, log2)
    try:
        wait_http(base + "/", proc, log2, timeout=300)
    finally:
        ctrl_c(proc, log2)
    assert (var / "admin-password.txt").read_text() == password
    assert "created superuser" not in log2.read_text()
