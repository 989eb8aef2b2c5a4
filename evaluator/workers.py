"""Who a worker is: the one name it signs its heartbeat and its leases with, and how often it
says it is alive."""

from __future__ import annotations

import os
import socket
import threading

HEARTBEAT_SECONDS = 10

_hardware: str | None = None


def set_hardware(slug: str) -> None:
    """The hardware target this worker process serves, decided once at boot."""
    global _hardware
    _hardware = slug


def hardware() -> str:
    """The worker's hardware target: what boot decided, else JAXBENCH_WORKER_HARDWARE."""
    from django.conf import settings  # deferred: also imported before Django is set up (worker_name)

    return _hardware or settings.JAXBENCH_WORKER_HARDWARE


def worker_name(per_thread: bool = False) -> str:
    """``host:pid`` for the worker process (its heartbeat row, answered pings); with
    ``per_thread`` the lease holder ``host:pid:thread`` (a worker runs several threads, each
    holding its own leases), so a lease's holder starts with its process's heartbeat name."""
    name = f"{socket.gethostname()}:{os.getpid()}"
    return f"{name}:{threading.get_ident()}" if per_thread else name
