"""Run the whole portal in one command: the set-up steps, embedded Redis (unless
DRAMATIQ_BROKER_URL is set), gunicorn with WhiteNoise, then one Dramatiq worker for this machine's
hardware and the demo. Ctrl-C stops all.

The set-up steps run in this process (one Django start, not one per step). The first page comes
first: the web server is started, and answers, before the worker and the demo, which import JAX
and would compete with it for the two cores. Each step prints one line with its time
(portal/startup.py); the last start-up line names the URL and the time start-up took."""

import contextlib
import datetime
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from jaxbench import environment
from portal import startup
from portal.embedded import start_redis


def probe_url(bind: str) -> str | None:
    """The URL to ask for the first page on, or None for a bind that is not host:port."""
    if bind.startswith(("unix:", "fd://")) or ":" not in bind:
        return None
    host, _, port = bind.rpartition(":")
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "[::]": "[::1]"}.get(host, host)
    return f"http://{host}:{port}/"


def wait_for_page(url: str, proc: subprocess.Popen, timeout: float) -> int:
    """Polls ``url`` until the web server answers; returns the HTTP status."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CommandError(f"the web server exited with status {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as e:  # it answers: a 400 for a host not allowed is still an answer
            return e.code
        except OSError:
            time.sleep(0.1)
    raise CommandError(f"the web server did not answer {url} within {timeout:.0f} s")


class WorkerWatch:
    """Prints one line when the worker started here has written its first heartbeat."""

    def __init__(self, log: startup.StartupLog, since: datetime.datetime, started: float):
        self.log, self.since, self.started = log, since, started
        self.done = False
        self._next = 0.0

    def poll(self) -> None:
        if self.done or time.monotonic() < self._next:
            return
        self._next = time.monotonic() + 1.0
        from evaluator.models import WorkerHeartbeat  # deferred: the app registry is ready here

        try:
            beat = WorkerHeartbeat.objects.filter(started_at__gte=self.since).first()
        except DatabaseError:
            return
        if beat is not None:
            self.done = True
            queues = ", ".join(beat.queues)
            self.log.line(
                f"[worker] ready after {time.monotonic() - self.started:.1f} s: hardware {beat.hardware}, "
                f"consuming {queues}"
            )


class Command(BaseCommand):
    help = "Set up, then start the embedded broker, the web server, a worker and the demo; Ctrl-C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--bind", default=settings.JAXBENCH_BIND)
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--worker-threads", type=int, default=1)
        parser.add_argument("--no-worker", action="store_true", help="serve pages only")
        parser.add_argument("--no-demo", action="store_true", help="do not populate the demo (also JAXBENCH_DEMO=0)")
        parser.add_argument(
            "--quick-demo", action="store_true", help="the demo without the expert sweeps (demo --quick)"
        )
        parser.add_argument(
            "--no-setup", action="store_true", help="skip migrate, sync_registry, collectstatic, ensure_admin"
        )
        parser.add_argument("--web-timeout", type=float, default=180, help="seconds to wait for the first page")

    def handle(self, *args, **opts):
        log = startup.StartupLog(self.stdout.write)
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.redis_proc = None
        # Ctrl-C or SIGTERM during start-up stops what has started so far
        self._install_interrupt()
        try:
            watch = self.start(log, opts)
            self.serve(watch)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop_all()

    def _install_interrupt(self) -> None:
        self._held = self._pending = False

        def interrupt(signum=None, frame=None):
            if self._held:  # a child being started: stop once it is recorded
                self._pending = True
                return
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, interrupt)
        signal.signal(signal.SIGINT, interrupt)

    @contextlib.contextmanager
    def _recorded(self):
        """A stop signal that lands while a child is started and recorded waits until it is:
        raised inside ``Popen`` it left the child running unknown to ``stop_all`` (a worker
        orphaned, waiting for a broker gone, by a stop right after the first page)."""
        self._held = True
        try:
            yield
        finally:
            self._held = False
        if self._pending:
            raise KeyboardInterrupt

    def start(self, log: startup.StartupLog, opts) -> "WorkerWatch | None":
        since = datetime.datetime.now(datetime.UTC)
        from jaxbench.sandbox import cores  # deferred: no sandbox import at module level (pyproject)

        # this process and all it starts (web server, worker) keep off the timing cores
        kept = cores.keep_off_timing_cores()
        if kept is not None:
            log.line(f"timing cores {cores.timing_cores()} kept for timing phases; everything else on {kept}")
        if not opts["no_setup"]:
            startup.setup(log)
        if not environment.is_set("DRAMATIQ_BROKER_URL"):
            with log.step("embedded Redis") as note, self._recorded():
                self.redis_proc = start_redis(settings.EMBEDDED_REDIS_SOCKET)
                reused = "; the one already running there" if self.redis_proc is None else ""
                note.append(f"unix socket {settings.EMBEDDED_REDIS_SOCKET}{reused}")
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        with log.step("web server") as note:
            with self._recorded():
                web = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "gunicorn",
                        "portal.wsgi:application",
                        "--config",
                        "python:portal.gunicorn_hooks",
                        "--bind",
                        opts["bind"],
                        "--workers",
                        str(opts["web_workers"]),
                        "--timeout",
                        "120",
                        "--access-logfile",
                        "-",
                    ],
                    cwd=settings.BASE_DIR,
                    start_new_session=True,
                )
                self.procs.append(("web", web))
            url = probe_url(opts["bind"])
            if url:
                status = wait_for_page(url, web, opts["web_timeout"])
                note.append(f"gunicorn, {opts['web_workers']} processes; GET / answered {status}")
            else:
                note.append(f"gunicorn on {opts['bind']}, not probed")
        watch = None
        if not opts["no_worker"]:
            with log.step("worker") as note:
                with self._recorded():
                    worker = subprocess.Popen(
                        manage + ["rundramatiq", "--processes", "1", "--threads", str(opts["worker_threads"])],
                        start_new_session=True,
                    )
                    self.procs.append(("worker", worker))
                note.append("started; a line says when it is ready (it detects the hardware first)")
            watch = WorkerWatch(log, since, time.monotonic())
            if not opts["no_demo"] and settings.JAXBENCH_DEMO:
                # Real results measured here: the worker evaluates them while the site is up.
                with log.step("demo") as note:
                    quick = ["--quick"] if opts["quick_demo"] else []
                    with self._recorded():
                        demo = subprocess.Popen(manage + ["demo", "--wait", *quick], start_new_session=True)
                        self.procs.append(("demo", demo))
                    note.append("started in the background lane; its progress bar follows")
        log.ready(url or f"http://{opts['bind']}/", "  (Ctrl-C stops everything)")
        return watch

    def serve(self, watch: "WorkerWatch | None") -> None:
        stopping = False

        def stop(signum=None, frame=None):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping:
            for name, p in self.procs:
                if p.poll() is not None and not (name == "demo" and p.returncode == 0):
                    self.stderr.write(f"{name} exited with status {p.returncode}; stopping the rest")
                    stopping = True
            if watch is not None:
                watch.poll()
            time.sleep(0.5)

    def stop_all(self) -> None:
        for _, p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for _, p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        if self.redis_proc is not None:
            self.redis_proc.terminate()
            self.redis_proc.wait(10)
        self.stdout.write("stopped.")
