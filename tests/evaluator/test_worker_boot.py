"""A worker on a Python that lacks a package the harness needs beside JAX does not start: every
evaluation it took would fail inside its export (jaxbench/harness/prepare.py, EXPORT_PACKAGES)."""

import pytest

from evaluator.worker_middleware import HardwareQueues
from jaxbench.harness import prepare


def test_a_worker_refuses_to_boot_on_a_python_without_a_package_the_harness_needs(monkeypatch):
    monkeypatch.setattr(prepare, "EXPORT_PACKAGES", ("jaxbench_no_such_package",))
    with pytest.raises(RuntimeError, match="cannot import jaxbench_no_such_package.*requirements.txt pins"):
        HardwareQueues().before_worker_boot(broker=None, worker=None)
