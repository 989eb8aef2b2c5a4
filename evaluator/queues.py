"""Every Dramatiq queue name, built here and nowhere else.

One queue per hardware target (``eval.<slug>``: only a worker on that hardware consumes it), the
CPU pre-check that screens candidates before an accelerator is spent on them, and the
maintenance queue (pings, expert sweeps' bookkeeping)."""

from __future__ import annotations

PRECHECK_QUEUE = "precheck"
MAINTENANCE_QUEUE = "maintenance"
# the queue actors are declared on; every message is re-addressed to its evaluation's queue
DECLARED_QUEUE = "eval.cpu"


HARDWARE_QUEUE_PREFIX = "eval."


def hardware_queue(slug: str) -> str:
    """The queue of the workers running on hardware target ``slug``."""
    return HARDWARE_QUEUE_PREFIX + slug


def hardware_of_queue(queue: str) -> str | None:
    """The hardware target whose workers consume ``queue`` (None for precheck, maintenance)."""
    return queue[len(HARDWARE_QUEUE_PREFIX) :] if queue.startswith(HARDWARE_QUEUE_PREFIX) else None


def stage_queue(stage: str, hardware_slug: str) -> str:
    """The queue of an evaluation at ``stage`` (``precheck`` or ``main``) on ``hardware_slug``."""
    return PRECHECK_QUEUE if stage == PRECHECK_QUEUE else hardware_queue(hardware_slug)
