"""20k Gemm_Multiply_LeakyReLU (KernelBench L2 problem 12)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    bias = normal_bf16(kb, (fout,), 0.02)
    return x, weight, bias


def reference(x, weight, bias, *, multiplier, negative_slope):
    y = jnp.matmul(x, weight) + bias
    y = y * multiplier
    return jnp.where(y >= 0, y, y * negative_slope)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 4 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="20k",
    slug="20k-gemm-multiply-leakyrelu",
    public_name="20k_Gemm_Multiply_LeakyReLU",
    title="GEMM + multiply + LeakyReLU",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b) multiplied by 2.0 and passed through a LeakyReLU with negative slope 0.1.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 4096,
            "in_features": 8192,
            "out_features": 8192,
            "multiplier": 2.0,
            "negative_slope": 0.1,
        },
        "small": {
            "batch_size": 128,
            "in_features": 8192,
            "out_features": 512,
            "multiplier": 2.0,
            "negative_slope": 0.1,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=12,
    notes="Weight stored (in_features, out_features) as in the public suite, i.e. the transpose of nn.Linear.weight.",
    upstream=Upstream(
        file="JAXBench/benchmark/20k_Gemm_Multiply_LeakyReLU/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
