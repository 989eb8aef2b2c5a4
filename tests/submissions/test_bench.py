"""benchmarks/trace_upload.py keeps working, on a tiny trace (the full-size figure:
``python benchmarks/trace_upload.py``)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.heavy
def test_trace_upload_bench_runs_small():
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JAXBENCH_VAR_DIR", "DATABASE_URL", "PYTEST_VERSION", "DJANGO_SETTINGS_MODULE")
    }
    out = subprocess.run(
        [sys.executable, "benchmarks/trace_upload.py", "--workloads", "3", "--samples", "4", "--repeat", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "12 candidates, 12 evaluations" in out.stdout and "samples/s" in out.stdout
