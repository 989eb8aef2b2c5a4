"""The messages alive per queue on Redis: waiting in the queue or its delay queue, or held in
the ack set of a consumer with a recent heartbeat, asked in two round trips."""

import time

from evaluator import broker as broker_state


class FakeRedis:
    def __init__(self, lists, sets, beats):
        self.lists, self.sets, self.beats = lists, sets, beats
        self.round_trips = 0

    def zrangebyscore(self, key, lo, hi):
        self.round_trips += 1
        return [name.encode() for name, at in self.beats.items() if at >= lo]

    def pipeline(self, transaction=True):
        client, calls = self, []

        class Pipe:
            def llen(self, key):
                calls.append(len(client.lists.get(key, [])))

            def scard(self, key):
                calls.append(len(client.sets.get(key, set())))

            def execute(self):
                client.round_trips += 1
                return list(calls)

        return Pipe()


class FakeBroker:
    namespace = "dramatiq"
    heartbeat_timeout = 60_000

    def __init__(self, client):
        self.client = client


def test_counts_waiting_delayed_and_live_consumers_held_messages():
    now = int(time.time() * 1000)
    client = FakeRedis(
        lists={"dramatiq:eval.cpu": [1, 2], "dramatiq:eval.cpu.DQ": [3], "dramatiq:precheck": [4]},
        sets={
            "dramatiq:__acks__.live.eval.cpu": {5},
            "dramatiq:__acks__.dead.eval.cpu": {6, 7},  # a consumer without a recent heartbeat
            "dramatiq:__acks__.live.precheck.DQ": {8},
        },
        beats={"live": now, "dead": now - 10 * 60_000},
    )
    got = broker_state._redis_alive(FakeBroker(client), ["eval.cpu", "precheck", "maintenance"])
    assert got == {"eval.cpu": 4, "precheck": 2, "maintenance": 0}
    assert client.round_trips == 2
