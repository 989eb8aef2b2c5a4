#!/usr/bin/env bash
# The GPU check, on a bare NVIDIA host with this repository checked out (at most ~10 minutes):
# installs the runtime and the pinned CUDA plugin (requirements-gpu.txt) into .venv, shows what
# the harness sees (check-env: devices, device lock, sandbox protections), then runs the three
# GPU example kernels and the XLA reference against itself through the portal's own pipeline
# (embedded SQLite + Redis, one worker for the detected gpu-* target) and prints the figures
# (benchmarks/gpu_check.py). Usage: bash benchmarks/gpu_check.sh [--repeats 10]
set -euo pipefail
cd "$(dirname "$0")/.."

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

make --no-print-directory venv-gpu
PY=.venv/bin/python
$PY -c 'import jax; print("jax", jax.__version__, "devices:", jax.devices())'
$PY -m jaxbench check-env
exec $PY benchmarks/gpu_check.py "$@"
