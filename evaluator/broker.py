"""What the broker holds: the messages alive per queue (waiting, or held by a consumer).

The database is the truth for every job and the broker only carries wake-ups, but to send one
wake-up per row, and never a second while the first still waits, the reconciler must know how
many of a queue's messages are still alive. On Redis, a message waits in the ``<queue>`` list
(retries in ``<queue>.DQ``) and, once fetched, sits in its consumer's ack set until acked; a
consumer that died keeps its set, still registered in ``__heartbeats__``, until dramatiq's
occasional maintenance requeues the set and unregisters it, so the sets of every registered
consumer count (not counting a dead one's made the reconciler send a second wake-up for a killed
worker's row, seen in benchmarks/chaos.py, before the first came back). RabbitMQ reports the ready messages of a queue
and its delay queue; a dead consumer's messages return to the queue when its connection closes,
but what a live consumer prefetched (two per worker thread) is not counted, so on RabbitMQ a row
whose message waits prefetched longer than the stale age may get one more (claim() then finds
nothing to do). Allowing for prefetch instead would hide a message that is really gone.
"""

from __future__ import annotations

import dramatiq
import redis
from dramatiq.errors import BrokerConnectionError

# what a broker that is away raises: dramatiq wraps most of it; Redis' enqueue does not
UNREACHABLE = (BrokerConnectionError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ConnectionError)


def is_rabbitmq(broker) -> bool:
    return not hasattr(broker, "client")


def ping(broker) -> None:
    """One round trip to a Redis broker (raises one of UNREACHABLE when it is away). A RabbitMQ
    consumer connects as it is made, so it needs none."""
    if not is_rabbitmq(broker):
        broker.client.ping()


def pending_messages(queues) -> dict[str, int]:
    """{queue: messages the broker holds for it and its delay queue}; raises when the broker
    cannot be asked."""
    broker = dramatiq.get_broker()
    out: dict[str, int] = {}
    for q in queues:
        if is_rabbitmq(broker):
            ready, delayed, _dead = broker.get_queue_message_counts(q)
            out[q] = int(ready) + int(delayed)
        else:
            out[q] = _redis_alive(broker, q)
    return out


def _redis_alive(broker, queue: str) -> int:
    ns, client = broker.namespace, broker.client
    # every consumer still registered: a dead one's unacked messages come back to the queue when
    # dramatiq's maintenance notices it (and unregisters it), so they are alive, not lost
    consumers = client.zrange(f"{ns}:__heartbeats__", 0, -1)
    total = 0
    for q in (queue, f"{queue}.DQ"):
        total += int(client.llen(f"{ns}:{q}"))
        for consumer in consumers:
            name = consumer.decode() if isinstance(consumer, bytes) else consumer
            total += int(client.scard(f"{ns}:__acks__.{name}.{q}"))
    return total
