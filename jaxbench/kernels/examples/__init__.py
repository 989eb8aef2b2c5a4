"""Example Pallas TPU candidates, one file per workload (named by the workload's slug).

Each file is an ordinary candidate (``workload(*inputs)``), written for TPU and run on CPU
under TPU interpret mode at the small profile; see README.md beside this file. Nothing here is
imported by the harness: the files are read as text and evaluated like any upload.
"""

from __future__ import annotations

import pathlib

_DIR = pathlib.Path(__file__).resolve().parent

EXAMPLES = {
    "1p": "1p-flash-attention.py",
    "8p": "8p-gemm.py",
    "9p": "9p-swiglu-mlp.py",
    "12p": "12p-rmsnorm.py",
    "37k": "37k-matmul-swish-scaling.py",
    "41k": "41k-gemm-add-relu.py",
}


def path(workload_id: str) -> pathlib.Path:
    try:
        return _DIR / EXAMPLES[workload_id]
    except KeyError:
        raise KeyError(f"no example for workload {workload_id!r}; have {sorted(EXAMPLES)}") from None


def source(workload_id: str) -> str:
    return path(workload_id).read_text()
