"""A real Dramatiq worker with two threads on the simulated exclusive device
(``JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE``): its evaluations hold the device one at a time, each
records its wait, and the worker process itself never holds the device or opens a backend
other than the trusted side's CPU."""

import os

import pytest

from evaluator.models import Evaluation, WorkerHeartbeat
from jaxbench.record import CORRECT_OUTCOMES
from jaxbench.sandbox import device
from tests.conftest import wait_for

from .test_pipeline_integration import CORRECT, main_rows, submit

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _holds(pid: int, path: str) -> bool:
    real = os.path.realpath(path)
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == real:
                return True
        except OSError:
            pass
    return False


def test_two_worker_threads_share_the_device_one_at_a_time(start_worker, purge_queues, tmp_path, monkeypatch):
    locks = str(tmp_path / "locks")
    monkeypatch.setenv("JAXBENCH_DEVICE_LOCK_DIR", locks)  # this process reads the same paths
    monkeypatch.setenv("JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE", "1")
    node = os.path.join(device.sim_dir("cpu"), "node")
    worker = start_worker(
        threads=2,
        extra_env={
            "JAXBENCH_DEVICE_LOCK_DIR": locks,
            "JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE": "1",
            # the baseline measured here, not taken from this host's disk cache: its child holds
            # the device too
            "JAXBENCH_BASELINE_CACHE_DAYS": "0",
        },
    )
    # three different sources (identical code would be reused, not run)
    sub = submit([CORRECT + f"\n# variant {i}\n" for i in range(3)])
    seen_holding = []

    def done():
        for hb in WorkerHeartbeat.objects.all():
            if _holds(hb.pid, node):  # sampled: the worker process must never have it open
                seen_holding.append(hb.pid)
        rows = main_rows(sub)
        return rows and all(r.state in Evaluation.FINAL_STATES for r in rows)

    try:
        wait_for(done, timeout=600, interval=0.5, message="every evaluation final")
    except AssertionError:
        raise AssertionError(f"not final: {[(r.state, r.message[:200]) for r in main_rows(sub)]}\n{worker.log()}")
    rows = main_rows(sub)
    assert [r.outcome in CORRECT_OUTCOMES for r in rows] == [True] * 3, [(r.outcome, r.message) for r in rows]
    for r in rows:
        assert r.record["phases"]["device_wait_s"] >= 0
        assert r.record["sandbox"]["device_lock"] == device.lock_path("cpu")
    assert not seen_holding
    (hb,) = WorkerHeartbeat.objects.all()
    assert set(hb.backends) <= {"cpu"}  # the trusted side's pinned CPU client, nothing else
    opens, closes = {}, {}
    with open(os.path.join(device.sim_dir("cpu"), "log")) as f:
        for line in f:
            event, ns, _pid, child = line.split()
            (opens if event == "open" else closes)[child] = int(ns)
    holds = sorted((opens[c], closes.get(c)) for c in opens)
    assert len(holds) >= 4  # the baseline and three candidates
    for (_, closed), (opened, _) in zip(holds, holds[1:], strict=False):
        assert closed is not None and closed <= opened, "two children held the device at once"
