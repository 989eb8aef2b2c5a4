"""A warm pair is warm whole or not at all (issue 33.6): when its export child fails to start,
the timer child started for it is closed at once, not left idle until the worker stops."""

import pytest

from jaxbench import harness
from jaxbench.harness import warm
from jaxbench.sandbox.options import SandboxError


class _ExporterThatNeverStarts:
    closed = False

    def hello(self, timeout):
        raise SandboxError("start-up timed out (simulated: the machine was too busy)")

    def close(self):
        self.closed = True


def test_a_timer_child_is_closed_when_its_export_child_fails_to_start(monkeypatch):
    timers, exporters = [], []
    real_new_child = warm.new_timer_child

    def new_child(platform, limits):
        child = real_new_child(platform, limits)
        timers.append(child)
        return child

    def new_export_child():
        exporters.append(_ExporterThatNeverStarts())
        return exporters[-1]

    monkeypatch.setattr(warm, "new_timer_child", new_child)
    monkeypatch.setattr(warm, "new_export_child", new_export_child)
    pool = harness.WarmPool("cpu", size=1)
    try:
        with pytest.raises(harness.InfrastructureError, match="simulated"):
            pool.acquire(timeout=120)
    finally:
        pool.close()
    assert timers and exporters
    first = timers[0]
    assert first.closed and first.dead(), "the timer child of a failed pair was left running"
    assert exporters[0].closed
