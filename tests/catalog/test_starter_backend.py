"""Workload metadata never opens a JAX backend in the process that reads it.

On a TPU VM one process at a time can hold the chip: a web server rendering a starter file, or a
worker preparing one, that opened JAX's default backend would lock every timer child out ("The
TPU is already in use by process ..."). A fresh interpreter with JAX_PLATFORMS unset, as on such
a VM, reads every workload's starter, input and output shapes; no backend may exist after."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
from jax._src import xla_bridge
from catalog.starter import starter_source
from jaxbench import workloads
for wl in workloads.all_workloads():
    for profile in ("small", "full"):
        starter_source(wl, profile)
        wl.output_spec(wl.cases(profile)[0])
print(sorted(xla_bridge._backends))
"""


def test_metadata_opens_no_backend():
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
