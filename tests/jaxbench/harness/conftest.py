"""Shared fixtures for the harness tests: one warm pool and one 12p baseline per session."""

import pathlib
import re

import pytest

CANDIDATES = pathlib.Path(__file__).parent / "candidates"
_TIMEOUTS_RE = re.compile(r"^#\s*timeouts:\s*(.+)$", re.M)


def source(name: str) -> str:
    return (CANDIDATES / name).read_text()


@pytest.fixture(scope="session")
def pool():
    from jaxbench import harness

    p = harness.WarmPool("cpu", size=1, refill="immediately")
    yield p
    p.close()


def untrusted_retried(measure):
    """``measure()`` with the harness's own retries while the machine's load spoils it
    (``harness.api.retried_while_untrusted``, as ``harness.evaluate`` and the worker): a test's
    expected outcome never depends on the load of the suite's other processes."""
    from jaxbench.harness.api import retried_while_untrusted

    return retried_while_untrusted(measure)[0]


@pytest.fixture(scope="session")
def baseline_12p():
    from jaxbench import harness

    return untrusted_retried(lambda: harness.measure_baseline("12p", profile="small", hardware="cpu"))


@pytest.fixture(scope="session")
def evaluate(pool, baseline_12p):
    """evaluate(file name or source, **kw) through the warm pool, 12p small on cpu."""

    def run(name_or_source, **kw):
        src = source(name_or_source) if name_or_source.endswith(".py") else name_or_source
        kw.setdefault("profile", "small")
        kw.setdefault("hardware", "cpu")
        kw.setdefault("baseline", baseline_12p)
        timeouts = {"compile": 60, "check": 60, "timing": 120}
        m = _TIMEOUTS_RE.search(src)  # a candidate may ask for shorter limits
        if m:
            for item in m.group(1).split():
                k, v = item.split("=")
                timeouts[k] = float(v)
        kw.setdefault("timeouts", timeouts)
        return pool.evaluate(kw.pop("workload", "12p"), src, **kw)

    return run
