"""42k Gemm_Max_Subtract_GELU (KernelBench L2 problem 80, as translated by the public suite)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    # 0.1 N (public: 0.02 N, which moves the output by less than the tolerance).
    bias = normal_bf16(kb, (fout,), 0.1)
    return x, weight, bias


def reference(x, weight, bias, *, max_dim):
    y = jnp.matmul(x, weight) + bias
    y = y - jnp.max(y, axis=max_dim, keepdims=True)
    return jax.nn.gelu(y)  # all GELU inputs are <= 0


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 11 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="42k",
    slug="42k-gemm-max-subtract-gelu",
    public_name="42k_Gemm_Max_Subtract_GELU",
    title="GEMM + row max + subtract + GELU",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b); each row's maximum is subtracted from the row, "
    "and the result goes through the tanh-form GELU.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {"batch_size": 4096, "in_features": 8192, "out_features": 8192, "max_dim": 1},
        "small": {"batch_size": 128, "in_features": 8192, "out_features": 512, "max_dim": 1},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=80,
    notes="KernelBench problem 80 subtracts the mean of the (batch, 1) maxima, which "
    "would make the output all zeros; the public suite subtracts the row maximum "
    "from the full GEMM output instead, and this workload follows the public suite. "
    "Weight stored (in_features, out_features) as in the public suite; bias drawn as "
    "0.1 N (public: 0.02 N). Most outputs are close to zero (GELU of values several "
    "units below the row maximum); the features within about 2.5 of the maximum "
    "carry the check.",
    upstream=Upstream(
        file="JAXBench/benchmark/42k_Gemm_Max_Subtract_GELU/baseline.py",
        commit="aa6005e64c68cd91908a8974bbbd89e4b47eaf6e",
        date="2026-07-31",
    ),
    deviations=(
        Deviation(
            "inputs",
            "bias N(0, 1) x 0.1 (public: x 0.02).",
            "N(0, 1) x 0.02 moves the output by less than the tolerance.",
        ),
    ),
)
