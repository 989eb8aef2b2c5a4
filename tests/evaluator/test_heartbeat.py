"""A worker's heartbeat row lives as long as the worker: removed when it stops (a killed
worker's row ages out: test_reconciler.test_a_killed_workers_heartbeat_ages_out)."""

import threading
import time
import types

import pytest

from evaluator.models import WorkerHeartbeat
from evaluator.worker_middleware import Heartbeat


@pytest.mark.django_db(transaction=True)  # the heartbeat thread writes through its own connection
def test_a_worker_stopped_during_a_beat_leaves_no_row():
    heartbeat = Heartbeat()
    beating = threading.Event()
    real_beat = heartbeat._beat

    def slow_beat():  # a beat that takes a while (a slow database), the row written at its end
        beating.set()
        time.sleep(0.5)
        real_beat()

    heartbeat._beat = slow_beat
    worker = types.SimpleNamespace(consumer_whitelist={"eval.cpu"})
    heartbeat.after_worker_boot(None, worker)
    assert beating.wait(10)
    heartbeat.before_worker_shutdown(None, worker)  # while the first beat is under way
    heartbeat._thread.join(10)
    assert not heartbeat._thread.is_alive()
    assert not WorkerHeartbeat.objects.exists()
