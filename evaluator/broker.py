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
    if not is_rabbitmq(broker):
        return _redis_alive(broker, list(queues))
    out: dict[str, int] = {}
    for q in queues:
        ready, delayed, _dead = broker.get_queue_message_counts(q)
        out[q] = int(ready) + int(delayed)
    return out


def _redis_alive(broker, queues: list[str]) -> dict[str, int]:
    """Two round trips whatever the number of queues and consumers (the health page and the
    reconciler ask often): the live consumers, then every list length and ack set size."""
    ns, client = broker.namespace, broker.client
    now_ms = int(time.time() * 1000)
    live = [
        c.decode() if isinstance(c, bytes) else c
        for c in client.zrangebyscore(f"{ns}:__heartbeats__", now_ms - broker.heartbeat_timeout, "+inf")
    ]
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        for q in (queue, f"{queue}.DQ"):
            pipe.llen(f"{ns}:{q}")
            for name in live:
                pipe.scard(f"{ns}:__acks__.{name}.{q}")
    counts = iter(pipe.execute())
    per_queue = 2 * (1 + len(live))
    return {queue: sum(int(next(counts)) for _ in range(per_queue)) for queue in queues}
