"""Run the whole portal in one command: embedded Redis (unless DRAMATIQ_BROKER_URL is set),
one Dramatiq worker for this machine's hardware, and gunicorn with WhiteNoise. Ctrl-C stops all."""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from jaxbench import environment
from portal.embedded import start_redis


class Command(BaseCommand):
    help = "Start the embedded broker, a worker and the web server; Ctrl-C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--bind", default=settings.JAXBENCH_BIND)
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--worker-threads", type=int, default=1)
        parser.add_argument("--no-worker", action="store_true", help="serve pages only")
        parser.add_argument("--no-demo", action="store_true", help="do not populate the demo (also JAXBENCH_DEMO=0)")

    def handle(self, *args, **opts):
        procs = []
        redis_proc = None
        if not environment.is_set("DRAMATIQ_BROKER_URL"):
            redis_proc = start_redis(settings.EMBEDDED_REDIS_SOCKET)
            self.stdout.write(f"embedded Redis on {settings.EMBEDDED_REDIS_SOCKET}")
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        if not opts["no_worker"]:
            procs.append(
                (
                    "worker",
                    subprocess.Popen(
                        manage + ["rundramatiq", "--processes", "1", "--threads", str(opts["worker_threads"])],
                        start_new_session=True,
                    ),
                )
            )
        procs.append(
            (
                "web",
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "gunicorn",
                        "portal.wsgi:application",
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
                ),
            )
        )
        if not opts["no_worker"] and not opts["no_demo"] and settings.JAXBENCH_DEMO:
            # Real results measured here: the worker evaluates them while the site is up.
            procs.append(("demo", subprocess.Popen(manage + ["demo", "--wait"], start_new_session=True)))
        self.stdout.write(self.style.SUCCESS(f"JAXBench Portal at http://{opts['bind']}/  (Ctrl-C stops everything)"))

        stopping = False

        def stop(signum=None, frame=None):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping:
                for name, p in procs:
                    if p.poll() is not None and not (name == "demo" and p.returncode == 0):
                        self.stderr.write(f"{name} exited with status {p.returncode}; stopping the rest")
                        stopping = True
                time.sleep(0.5)
        finally:
            for _, p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            for _, p in procs:
                try:
                    p.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
            if redis_proc is not None:
                redis_proc.terminate()
                redis_proc.wait(10)
            self.stdout.write("stopped.")
