"""A message round-trips through a real worker process on the variant's broker."""

import pytest

from tests.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_ping_roundtrip_through_real_worker(start_worker, purge_queues):
    from evaluator.actors import send_ping
    from evaluator.models import QueuePing, WorkerHeartbeat

    worker = start_worker(queues=("maintenance", "eval.cpu"))
    ping = send_ping("eval.cpu")
    try:
        wait_for(lambda: QueuePing.objects.get(pk=ping.pk).answered_at, timeout=90, message="ping answer")
    except AssertionError:
        raise AssertionError("worker never answered; its log:\n" + worker.log())
    answered = QueuePing.objects.get(pk=ping.pk)
    # The worker also announced itself with its hardware and queues, under the name it signs with.
    hb = wait_for(lambda: WorkerHeartbeat.objects.filter(hardware="cpu").first(), timeout=30, message="heartbeat")
    assert "eval.cpu" in hb.queues
    assert answered.answered_by == hb.name


def test_worker_ignores_queues_of_other_hardware(start_worker, purge_queues):
    """A CPU worker must never consume a TPU queue's messages."""
    import time

    from evaluator.actors import send_ping
    from evaluator.models import QueuePing

    start_worker(queues=("maintenance", "eval.cpu"))
    tpu_ping = send_ping("eval.tpu-v6e")
    cpu_ping = send_ping("eval.cpu")
    wait_for(lambda: QueuePing.objects.get(pk=cpu_ping.pk).answered_at, timeout=90, message="cpu ping")
    time.sleep(1.0)
    assert QueuePing.objects.get(pk=tpu_ping.pk).answered_at is None


def test_a_worker_detects_its_hardware_without_opening_a_device(start_worker, purge_queues):
    """With no queue override the worker detects its hardware at boot in a short-lived child: its
    own process has no JAX backend afterwards (on a TPU VM it would otherwise hold the chip that
    every sandboxed child needs), and it consumes the detected target's queues."""
    from evaluator.actors import send_ping
    from evaluator.models import QueuePing, WorkerHeartbeat

    worker = start_worker(extra_env={"JAXBENCH_WORKER_QUEUES": "", "JAXBENCH_WORKER_HARDWARE": "tpu-v6e"})
    ping = send_ping("eval.cpu")
    try:
        wait_for(lambda: QueuePing.objects.get(pk=ping.pk).answered_at, timeout=120, message="ping answer")
    except AssertionError:
        raise AssertionError("worker never answered; its log:\n" + worker.log())
    # its first beat may land after its first answer (a loaded machine): waited for, as above
    name = QueuePing.objects.get(pk=ping.pk).answered_by
    hb = wait_for(lambda: WorkerHeartbeat.objects.filter(name=name).first(), timeout=30, message="heartbeat")
    assert hb.hardware == "cpu" and {"eval.cpu", "precheck", "maintenance"} <= set(hb.queues)
    assert hb.backends == [], hb.backends
