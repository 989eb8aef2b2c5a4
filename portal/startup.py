"""The portal's start-up steps, run in one process (one Django start instead of one per step),
each printed on one line with its time:

    [start-up] migrate: 0.9 s (42 migrations applied)
    ...
    [start-up] JAXBench Portal at http://127.0.0.1:8000/ : ready in 7.9 s (Ctrl-C stops everything)

``benchmarks/startup.py`` reads these lines back, so their shape is kept in one place here."""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.management import call_command

PREFIX = "[start-up]"
# "[start-up] <step>: <seconds> s (<note>)"; the final line names the URL and the whole time
STEP_LINE = re.compile(r"^\[start-up\] (?P<step>[^:]+): (?P<seconds>\d+(?:\.\d+)?) s(?: \((?P<note>.*)\))?$")
READY_LINE = re.compile(r"^\[start-up\] JAXBench Portal at (?P<url>\S+) : ready in (?P<seconds>\d+(?:\.\d+)?) s")


class StartupLog:
    """Writes one line per step with its time."""

    def __init__(self, write: Callable[[str], object]):
        self.started = time.monotonic()
        self._write = write
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def line(self, text: str) -> None:
        with self._lock:
            self._write(text)

    def done(self, step: str, seconds: float, note: str = "") -> None:
        self.line(f"{PREFIX} {step}: {seconds:.1f} s" + (f" ({note})" if note else ""))

    @contextmanager
    def step(self, name: str) -> Iterator[list[str]]:
        """Times the block; what it appends to the yielded list becomes the line's note."""
        notes: list[str] = []
        t0 = time.monotonic()
        yield notes
        self.done(name, time.monotonic() - t0, "; ".join(n for n in notes if n))

    def ready(self, url: str, tail: str = "") -> None:
        self.line(f"{PREFIX} JAXBench Portal at {url} : ready in {self.elapsed():.1f} s{tail}")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def migrate(log: StartupLog) -> None:
    # deferred: the database layer is ready only once Django is set up by the command
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    with log.step("migrate") as note:
        recorder = MigrationRecorder(connection)
        before = len(recorder.applied_migrations()) if recorder.has_table() else 0
        call_command("migrate", interactive=False, verbosity=0)
        applied = len(recorder.applied_migrations()) - before
        note.append(f"{applied} migrations applied" if applied else "database up to date")


def sync_registry(log: StartupLog) -> None:
    """The hardware targets and the 50 workloads into the database (traces every shape: a few
    seconds of CPU)."""
    out = io.StringIO()
    with log.step("sync_registry") as note:
        call_command("sync_registry", stdout=out)
        note.append(_last_line(out.getvalue()))


def collectstatic(log: StartupLog) -> None:
    out = io.StringIO()
    with log.step("collectstatic") as note:
        call_command("collectstatic", interactive=False, verbosity=1, stdout=out)
        note.append(_last_line(out.getvalue()))


def ensure_admin(log: StartupLog) -> None:
    out = io.StringIO()
    with log.step("ensure_admin") as note:
        call_command("ensure_admin", stdout=out)
        note.append(_last_line(out.getvalue()))


def setup(log: StartupLog) -> None:
    """Every step, one after the other (``manage.py setup_portal``, before ``manage.py demo``)."""
    migrate(log)
    sync_registry(log)
    collectstatic(log)
    ensure_admin(log)
