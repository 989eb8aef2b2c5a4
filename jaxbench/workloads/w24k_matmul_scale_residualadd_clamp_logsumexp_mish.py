"""24k Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish (KernelBench L2 problem 22)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    batch, fin, hidden = cfg["batch_size"], cfg["input_size"], cfg["hidden_size"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    weight = normal_bf16(kw, (hidden, fin), 0.02)  # (out, in)
    bias = normal_bf16(kb, (hidden,), 0.02)
    return x, weight, bias


def reference(x, weight, bias, *, scale_factor, clamp_min, clamp_max):
    y = jnp.matmul(x, weight.T) + bias
    y = y * scale_factor
    y = y + y  # residual add of the tensor with itself
    y = jnp.clip(y, clamp_min, clamp_max)
    z = jax.nn.logsumexp(y, axis=1, keepdims=True)  # (batch, 1)
    mish = z * jnp.tanh(jnp.logaddexp(z, 0.0))  # softplus(z) = logaddexp(z, 0)
    return z * mish


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["input_size"], cfg["hidden_size"]
    flops = 2 * b * k * n + 8 * b * n + 10 * b
    return flops, 2 * (b * k + k * n + n + b)


WORKLOAD = Workload(
    id="24k",
    slug="24k-matmul-scale-residualadd-clamp-logsumexp-mish",
    public_name="24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish",
    title="Matmul + scale + residual add + clamp + logsumexp + Mish",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W^T + b) scaled by 2 and added to itself, clamped to "
    "[-10, 10], reduced by a row-wise logsumexp, and multiplied by its own Mish "
    "(z * mish(z)), giving one value per row.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 4096,
            "input_size": 8192,
            "hidden_size": 8192,
            "scale_factor": 2.0,
            "clamp_min": -10.0,
            "clamp_max": 10.0,
        },
        "small": {
            "batch_size": 128,
            "input_size": 8192,
            "hidden_size": 512,
            "scale_factor": 2.0,
            "clamp_min": -10.0,
            "clamp_max": 10.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=22,
    notes="Weight stored (hidden, input) as nn.Linear.weight. Output (batch, 1).",
    upstream=Upstream(
        file="JAXBench/benchmark/24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(),
)
