"""Every Dramatiq queue name, built here and nowhere else.

One queue per hardware target (``eval.<slug>``: only a worker on that hardware consumes it), the
CPU pre-check that screens candidates before an accelerator is spent on them, and the
maintenance queue (pings, reconcile requests).

Two lanes per evaluation queue. User submissions (form, REST API, CLI) go to the queue itself;
demo and maintenance work (``manage.py demo``'s submissions, the expert sweeps) go to its
``background.`` twin (``background.eval.cpu``, ``background.precheck``). A worker consumes both
lanes of its hardware, and the background messages are handled by actors of a lower priority
(``BACKGROUND_PRIORITY``): Dramatiq's worker takes the lowest priority number first among the
messages it has fetched, so a user's evaluation never waits behind queued background work, only
behind what already runs. Per-queue consumption and actor priorities work alike on the embedded
Redis, Redis and RabbitMQ (no broker-side priority is needed), and the device lock still lets one
process hold a device at a time.
"""

from __future__ import annotations

PRECHECK_QUEUE = "precheck"
MAINTENANCE_QUEUE = "maintenance"
# the queue actors are declared on; every message is re-addressed to its evaluation's queue
DECLARED_QUEUE = "eval.cpu"

USER_LANE = "user"
BACKGROUND_LANE = "background"
LANES = (USER_LANE, BACKGROUND_LANE)
BACKGROUND_PREFIX = "background."
# Dramatiq actor priority of background work: a worker runs every fetched message of a lower
# number (user evaluations: 0, the default) first
BACKGROUND_PRIORITY = 100


HARDWARE_QUEUE_PREFIX = "eval."


def hardware_queue(slug: str, lane: str = USER_LANE) -> str:
    """The queue of the workers running on hardware target ``slug``, in ``lane``."""
    return in_lane(HARDWARE_QUEUE_PREFIX + slug, lane)


def in_lane(queue: str, lane: str) -> str:
    """``queue`` itself (user lane) or its ``background.`` twin."""
    if lane not in LANES:
        raise ValueError(f"unknown lane {lane!r}")
    return BACKGROUND_PREFIX + queue if lane == BACKGROUND_LANE else queue


def lane_of_queue(queue: str) -> tuple[str, str]:
    """(lane, the user-lane queue name) of ``queue``."""
    if queue.startswith(BACKGROUND_PREFIX):
        return BACKGROUND_LANE, queue[len(BACKGROUND_PREFIX) :]
    return USER_LANE, queue


def hardware_of_queue(queue: str) -> str | None:
    """The hardware target whose workers consume ``queue`` (None for precheck, maintenance)."""
    _lane, queue = lane_of_queue(queue)
    return queue[len(HARDWARE_QUEUE_PREFIX) :] if queue.startswith(HARDWARE_QUEUE_PREFIX) else None


def stage_queue(stage: str, hardware_slug: str, lane: str = USER_LANE) -> str:
    """The queue of an evaluation at ``stage`` (``precheck`` or ``main``) on ``hardware_slug``."""
    return in_lane(PRECHECK_QUEUE, lane) if stage == PRECHECK_QUEUE else hardware_queue(hardware_slug, lane)


def with_background(queues) -> set[str]:
    """``queues`` plus the background twin of each evaluation queue among them."""
    out = set(queues)
    for q in queues:
        if q == PRECHECK_QUEUE or q.startswith(HARDWARE_QUEUE_PREFIX):
            out.add(in_lane(q, BACKGROUND_LANE))
    return out
