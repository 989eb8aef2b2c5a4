"""What the broker holds: the messages alive per queue (waiting, or held by a live consumer).

The database is the truth for every job and the broker only carries wake-ups, but to send one
wake-up per row, and never a second while the first still waits, the reconciler must know how
many of a queue's messages are still alive. On Redis, a message waits in the ``<queue>`` list
(retries in ``<queue>.DQ``) and, once fetched, sits in its consumer's ack set until acked; a
consumer that died keeps its set until dramatiq's occasional maintenance requeues it, so only the
sets of consumers with a recent heartbeat count. RabbitMQ reports the ready messages of a queue
and its delay queue; a dead consumer's messages return to the queue when its connection closes,
but what a live consumer prefetched (two per worker thread) is not counted, so on RabbitMQ a row
whose message waits prefetched longer than the stale age may get one more (claim() then finds
nothing to do). Allowing for prefetch instead would hide a message that is really gone.
"""

from __future__ import annotations

import time

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
    now_ms = int(time.time() * 1000)
    live = client.zrangebyscore(f"{ns}:__heartbeats__", now_ms - broker.heartbeat_timeout, "+inf")
    total = 0
    for q in (queue, f"{queue}.DQ"):
        total += int(client.llen(f"{ns}:{q}"))
        for consumer in live:
            name = consumer.decode() if isinstance(consumer, bytes) else consumer
            total += int(client.scard(f"{ns}:__acks__.{name}.{q}"))
    return total
