"""Which limit ends a phase: the child's CPU seconds where its work is host CPU work (the compile
side everywhere; the check and timing runs on the cpu target), wall seconds where a device does
the work. A slow program is the candidate's timeout; a child the machine starved is the
harness's retry (MachineBusy), whatever the load."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from jaxbench import workloads
from jaxbench.harness import run as run_module
from jaxbench.harness.run import MachineBusy, Run
from jaxbench.harness.settings import CPU_WALL_SLACK, DEFAULT_TIMEOUTS, cpu_time_limited
from jaxbench.sandbox.options import PhaseTimeout


@pytest.mark.parametrize(
    "phase, platform, expected",
    [
        ("compile", "cpu", True),
        ("compile", "tpu", True),
        ("export", "gpu", True),
        ("check", "cpu", True),
        ("timing", "cpu", True),
        ("check", "tpu", False),
        ("timing", "gpu", False),
        ("startup", "cpu", False),
    ],
)
def test_which_phases_count_cpu_seconds(phase, platform, expected):
    assert phase in DEFAULT_TIMEOUTS
    assert cpu_time_limited(phase, platform) is expected


class _Child:
    """A child that never replies and uses CPU at ``rate`` CPU seconds per wall second (a
    starved child: well below 1; a busy one: about 1)."""

    def __init__(self, platform: str, rate: float):
        self.opt = SimpleNamespace(platform=platform)
        self.rate, self.t0, self.sent = rate, time.monotonic(), []

    def send(self, msg):
        self.sent.append(msg)

    def recv(self, timeout):
        time.sleep(min(timeout, 0.02))
        raise PhaseTimeout("no reply")

    def cpu_seconds(self):
        return (time.monotonic() - self.t0) * self.rate


def _run(limit: float) -> Run:
    wl = workloads.get("12p")
    return Run(wl, "small", mode="candidate", timeouts={**DEFAULT_TIMEOUTS, "check": limit, "timing": limit})


@pytest.mark.parametrize("phase", ["check", "timing"])
def test_a_busy_program_on_the_cpu_target_times_out_on_its_cpu_seconds(phase):
    run, child = _run(0.3), _Child("cpu", 1.0)
    t = time.monotonic()
    with pytest.raises(PhaseTimeout):
        run.ask(child, phase, {"cmd": phase})
    # it used its 0.3 CPU seconds: the candidate's timeout, as soon as the limit was passed
    assert time.monotonic() - t < 0.3 * CPU_WALL_SLACK
    assert run.phases[f"{phase}_cpu_s"] > 0.3


@pytest.mark.parametrize("phase", ["check", "timing"])
def test_a_starved_child_on_the_cpu_target_is_the_machines_not_a_timeout(phase):
    """Beside a busy neighbour the child got a tenth of a core: past the wall limit, short of
    its CPU limit, so no verdict; past CPU_WALL_SLACK times it, a retry."""
    run, child = _run(0.2), _Child("cpu", 0.1)
    t = time.monotonic()
    with pytest.raises(MachineBusy):
        run.ask(child, phase, {"cmd": phase})
    assert time.monotonic() - t >= 0.2 * CPU_WALL_SLACK * 0.95
    assert run.phases[f"{phase}_cpu_s"] < 0.2


@pytest.mark.parametrize("platform", ["tpu", "gpu"])
def test_on_an_accelerator_the_check_is_bounded_by_wall_time(platform):
    """The device does the work; the host CPU of a device-bound run stays idle, so a CPU limit
    would never end a slow device program: the wall limit does."""
    run, child = _run(0.2), _Child(platform, 0.0)
    t = time.monotonic()
    with pytest.raises(PhaseTimeout):
        run.ask(child, "check", {"cmd": "check"})
    assert time.monotonic() - t < 0.2 * CPU_WALL_SLACK
    assert "check_cpu_s" not in run.phases


def test_without_per_child_accounting_the_limit_is_wall_time(monkeypatch):
    run, child = _run(0.2), _Child("cpu", 1.0)
    monkeypatch.setattr(child, "cpu_seconds", lambda: None)
    t = time.monotonic()
    with pytest.raises(PhaseTimeout):
        run.ask(child, "check", {"cmd": "check"})
    assert time.monotonic() - t < 0.2 * CPU_WALL_SLACK
    assert run_module.cpu_time_limited("check", "cpu")
