"""Start-up output: each install step says what it installs and hides pip's "Requirement already
satisfied" wall; runportal prints one timed line per step, in order, the URL line last, and the
web server answers before the worker starts."""

import importlib.util
import io
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from portal import startup

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_pip_install():
    spec = importlib.util.spec_from_file_location("pip_install", ROOT / ".ci" / "pip_install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_install_filter_drops_only_the_already_satisfied_lines_even_split_across_reads():
    pip_install = load_pip_install()
    out = io.BytesIO()
    filt = pip_install.LineFilter(out)
    text = (
        b"Requirement already satisfied: Django==5.2.19 in ./.venv (5.2.19)\n"
        b"Collecting pytest==9.2.0\n"
        b"  Downloading pytest-9.2.0-py3-none-any.whl (365 kB)\n"
        b"\r\x1b[2K   \xe2\x94\x81\xe2\x94\x81 1.0/3.0 MB\r\x1b[2K   \xe2\x94\x81\xe2\x94\x81 3.0/3.0 MB\n"
        b"Requirement already satisfied: numpy==2.4.6 in ./.venv (2.4.6)\r\n"
        b"Requ"  # a progress line would not start so: held until it is known
        b"ired by nothing\n"
        b"Successfully installed pytest-9.2.0\n"
    )
    for i in range(0, len(text), 7):  # as pip writes it: in pieces
        filt.feed(text[i : i + 7])
    filt.close()
    shown = out.getvalue()
    assert b"already satisfied" not in shown and filt.dropped == 2
    assert shown.startswith(b"Collecting pytest==9.2.0\n")
    assert b"3.0/3.0 MB" in shown and b"Required by nothing\n" in shown
    assert shown.endswith(b"Successfully installed pytest-9.2.0\n")


def test_an_install_step_prints_its_header_pips_output_and_its_time(tmp_path):
    fake_pip = tmp_path / "python"
    fake_pip.write_text(
        "#!/bin/sh\necho \"Requirement already satisfied: pip in ./.venv\"\necho \"Collecting tiny==1.0\"\nexit 0\n"
    )
    fake_pip.chmod(0o755)
    out = subprocess.run(
        [
            sys.executable,
            ".ci/pip_install.py",
            "--step",
            "runtime 2/3",
            "--what",
            "the runtime",
            "--about",
            "about 25 s",
        ]
        + ["--python", str(fake_pip), "--", "-r", "requirements.txt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "[install runtime 2/3] the runtime (about 25 s)"
    assert out[1] == "Collecting tiny==1.0"
    assert out[2].startswith("[install runtime 2/3] done in ") and out[2].endswith(" s; 1 already installed")


def test_the_step_lines_have_the_shape_the_startup_benchmark_reads():
    lines = []
    log = startup.StartupLog(lines.append)
    with log.step("migrate") as note:
        note.append("51 migrations applied")
    log.ready("http://127.0.0.1:8000/")
    m = startup.STEP_LINE.match(lines[0])
    assert m and m["step"] == "migrate" and m["note"] == "51 migrations applied"
    assert startup.READY_LINE.match(lines[1])["url"] == "http://127.0.0.1:8000/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.heavy
def test_runportal_prints_its_steps_in_order_and_the_url_last(tmp_path):
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_VERSION", "DATABASE_URL", "DRAMATIQ_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(JAXBENCH_BIND=f"127.0.0.1:{port}", JAXBENCH_VAR_DIR=str(tmp_path / "var"), PYTHONUNBUFFERED="1")
    log = tmp_path / "runportal.log"
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "runportal", "--no-demo", "--web-workers", "1"],
        cwd=ROOT,
        env=env,
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while "\n[worker] ready after " not in log.read_text():
            assert proc.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)
    lines = [ln for ln in log.read_text().splitlines() if ln.startswith(("[start-up]", "[worker]"))]
    steps = [m["step"] for m in map(startup.STEP_LINE.match, lines) if m]
    assert steps == [
        "migrate",
        "sync_registry",
        "collectstatic",
        "ensure_admin",
        "embedded Redis",
        "web server",
        "worker",
    ], lines
    assert "GET / answered 200" in lines[5] and "applied" in lines[0]
    ready = startup.READY_LINE.match(lines[7])
    assert ready and ready["url"] == f"http://127.0.0.1:{port}/", lines
    assert lines[8].startswith("[worker] ready after ") and "eval.cpu" in lines[8]
    assert log.read_text().rstrip().endswith("stopped.")


def test_a_stop_signal_while_a_child_starts_stops_it_once_it_is_recorded():
    """A SIGTERM that lands inside ``Popen`` once raised there, leaving the just-started worker
    running and unknown to ``stop_all`` (an orphaned worker after the fresh-clone test stopped
    the portal right after its first page). It now waits until the child is recorded."""
    from portal.management.commands import runportal

    cmd = runportal.Command()
    cmd.procs = []
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        cmd._install_interrupt()
        with pytest.raises(KeyboardInterrupt):
            with cmd._recorded():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler runs here, while the child is being started
                cmd.procs.append(("worker", "started"))
        assert cmd.procs == [("worker", "started")]
        with pytest.raises(KeyboardInterrupt):  # outside a start, at once, as before
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
