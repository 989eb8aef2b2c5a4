"""Calm outages: when the database or the broker is away, a worker waits for it instead of
failing message after message, and a verdict already measured is kept until it can be stored.

Waiting backs off exponentially (capped) and logs once per change of state ("database
unreachable, waiting" and "database back after N s"), not once per message or per try: the
worker's other threads wait the same way, and the broker keeps the messages nobody took.
The database side is ``with_database``; the broker side is ``CalmConsumers`` (the consumer
threads Dramatiq restarts after a connection error wait here, with the same backoff, and
Dramatiq's own lines about the outage are counted here instead of logged: ``hold_back``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import close_old_connections, connection
from django.db.utils import InterfaceError, OperationalError

log = logging.getLogger(__name__)

T = TypeVar("T")

# the errors a database that is away (restarting, refusing connections, cut) raises
UNREACHABLE = (OperationalError, InterfaceError)
FIRST_WAIT_S = 0.5
MAX_WAIT_S = 30.0


def next_wait(wait: float | None) -> float:
    """The backoff after ``wait`` (None: the first wait): doubling, capped (pure)."""
    return FIRST_WAIT_S if wait is None else min(MAX_WAIT_S, wait * 2)


class Service:
    """Whether one service is away, shared by the worker's threads: one log line per outage."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._held_back = 0  # lines about this outage not logged (see hold_back)
        self._waits = threading.local()  # each thread backs off on its own

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def note_down(self, exc: BaseException) -> None:
        with self._lock:
            if self._down_since is None:
                self._down_since = time.monotonic()
                log.warning("%s unreachable (%s: %s); waiting for it", self.name, type(exc).__name__, exc)

    def hold_back(self, exc: BaseException | None) -> None:
        """Another line about this outage, not logged but counted (said when the service is
        back); ``exc`` (None: a line that names no error) starts the outage if none is on."""
        if exc is not None:
            self.note_down(exc)
        with self._lock:
            if self._down_since is not None:
                self._held_back += 1

    def note_up(self) -> None:
        self._waits.wait = None
        if self._down_since is None:  # the common case, without the lock
            return
        with self._lock:
            if self._down_since is not None:
                held = f" ({self._held_back} repeated log records held back)" if self._held_back else ""
                log.warning("%s back after %.1f s%s", self.name, time.monotonic() - self._down_since, held)
                self._down_since = None
                self._held_back = 0

    def back_off(self) -> float:
        """This thread's next wait while the service is away (and how long that was)."""
        wait = next_wait(getattr(self._waits, "wait", None))
        self._waits.wait = wait
        _sleep(wait)
        return wait


DATABASE = Service("database")
BROKER = Service("broker")


def _reset_connection() -> None:
    """Drop a broken connection so that the next try opens a new one (never inside a
    transaction: its owner decides; the worker calls with_database outside any)."""
    if connection.in_atomic_block:
        return
    try:
        connection.close()
    except Exception:  # noqa: BLE001 - closing a dead connection may fail too
        pass
    close_old_connections()


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def with_database(fn: Callable[[], T], *, deadline: float | None = None) -> T:
    """``fn()``, retried while the database is unreachable: backing off from FIRST_WAIT_S to
    MAX_WAIT_S, until ``deadline`` (a time.monotonic() value; None: no deadline), after which
    the last error is raised. Any other error is raised at once."""
    wait = None
    while True:
        try:
            out = fn()
        except UNREACHABLE as exc:
            DATABASE.note_down(exc)
            wait = next_wait(wait)
            if deadline is not None and time.monotonic() + wait > deadline:
                raise
            _reset_connection()
            _sleep(wait)
            continue
        DATABASE.note_up()
        return out
