"""A stand-in for ``harness.api.measure_baseline`` for the tests of the layers above it (the
harness's baseline cache, the worker's ``baseline_for``): no child starts. Each call is recorded
(workload, profile, hardware, timeouts) and returns a complete baseline record whose median grows
with every call (3 ms, 4 ms, ...), so a test tells a stored figure from a new measurement."""

import time

from jaxbench import harness
from jaxbench.harness import api


def fake_measure_baseline(monkeypatch) -> list[tuple]:
    """Patch ``measure_baseline`` for one test, with this process's memory layer empty; returns
    the list of calls."""
    calls: list[tuple] = []

    def measure(wl, *, profile, hardware=None, timeouts=None, **kw):
        calls.append((wl.id, profile, hardware, timeouts))
        median = 0.002 + len(calls) * 1e-3
        return {
            "kind": "baseline",
            "workload": wl.id,
            "profile": profile,
            "hardware": hardware or "cpu",
            "harness_version": harness.HARNESS_VERSION,
            "median_s": median,
            "timing": {"median_s": median},
            "measured_at": time.time(),
        }

    monkeypatch.setattr(api, "measure_baseline", measure)
    monkeypatch.setattr(api, "_BASELINES", {})  # this process has measured nothing yet
    return calls
