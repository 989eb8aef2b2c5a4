#!/usr/bin/env bash
# The TPU check, on a TPU VM with this repository checked out and JAX with libtpu installed (at
# most ~10 minutes): installs what the harness needs beside JAX (tokamax and its dependencies,
# tqdm, flatbuffers) from wheels in .whl-tpu/ when that folder exists (a host with no package
# index), shows what the harness sees (check-env: devices, the device lock, sandbox protections),
# then runs every honest kernel and the XLA reference against itself through the harness's warm
# pool on the chip and prints the figures (benchmarks/tpu_harness.py; its --json keeps every
# record).
# Usage: bash benchmarks/tpu_check.sh [--profile small] [--repeats 2] [--json FILE]
#        [--public-suite DIR]  (also each level-2 public file, from DIR/JAXBench/benchmark/level2/)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ -d .whl-tpu ]; then
  site=${TMPDIR:-/tmp}/jaxbench-site
  PIP_CONFIG_FILE=/dev/null $PY -m pip install --isolated -q --no-index --no-deps --no-compile \
    --no-cache-dir --upgrade --target "$site" .whl-tpu/*.whl
  export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PYTHONUNBUFFERED=1
$PY -c 'import jax; print("jax", jax.__version__)'
# what the harness imports beside JAX: a preinstalled JAX may lack flatbuffers (jax.export needs it)
for mod in flatbuffers tqdm tokamax; do
  $PY -c "import $mod" 2>/dev/null || { echo "missing Python package: $mod (carry its wheel in .whl-tpu/)" >&2; exit 2; }
done
$PY -m jaxbench check-env
exec $PY benchmarks/tpu_harness.py "$@"
