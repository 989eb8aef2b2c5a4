"""Example Pallas candidates, one file per workload (named by the workload's slug): TPU kernels
here (``EXAMPLES``), GPU (Triton) kernels under ``gpu/`` (``EXAMPLES_GPU``).

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

# GPU (Triton backend) examples, for the gpu targets; run under Pallas interpret mode on CPU
EXAMPLES_GPU = {
    "1p": "gpu/1p-flash-attention.py",
    "8p": "gpu/8p-gemm.py",
    "12p": "gpu/12p-rmsnorm.py",
}

# the examples written for each JAX platform a target runs on
BY_PLATFORM = {"tpu": EXAMPLES, "cpu": EXAMPLES, "gpu": EXAMPLES_GPU}


def for_platform(platform: str) -> dict[str, str]:
    """The examples for targets of ``platform`` (cpu runs the TPU ones in interpret mode)."""
    return BY_PLATFORM[platform]


def path(workload_id: str, platform: str = "tpu") -> pathlib.Path:
    table = for_platform(platform)
    try:
        return _DIR / table[workload_id]
    except KeyError:
        raise KeyError(f"no {platform} example for workload {workload_id!r}; have {sorted(table)}") from None


def source(workload_id: str, platform: str = "tpu") -> str:
    return path(workload_id, platform).read_text()
