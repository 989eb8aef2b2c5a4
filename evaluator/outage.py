"""Calm outages: when the database is away, a worker waits for it instead of failing message
after message, and a verdict already measured is kept until it can be stored.

Waiting backs off exponentially (capped) and logs once per change of state ("database
unreachable, waiting" and "database back after N s"), not once per message or per try: the
worker's other threads wait the same way, and the broker keeps the messages nobody took.
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

_state_lock = threading.Lock()
_down_since: float | None = None  # shared by the worker's threads: one log line per outage


def note_down(exc: BaseException) -> None:
    global _down_since
    with _state_lock:
        if _down_since is None:
            _down_since = time.monotonic()
            log.warning("database unreachable (%s: %s); waiting for it", type(exc).__name__, exc)


def note_up() -> None:
    global _down_since
    with _state_lock:
        if _down_since is not None:
            log.warning("database back after %.1f s", time.monotonic() - _down_since)
            _down_since = None


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
    wait = FIRST_WAIT_S
    while True:
        try:
            out = fn()
        except UNREACHABLE as exc:
            note_down(exc)
            if deadline is not None and time.monotonic() + wait > deadline:
                raise
            _reset_connection()
            _sleep(wait)
            wait = min(MAX_WAIT_S, wait * 2)
            continue
        note_up()
        return out
