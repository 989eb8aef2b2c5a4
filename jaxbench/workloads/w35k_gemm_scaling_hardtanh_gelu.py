"""35k Gemm_Scaling_Hardtanh_GELU (KernelBench L2 problem 53)."""

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


def reference(x, weight, bias, *, scaling_factor, hardtanh_min, hardtanh_max):
    # Nominal bf16 flow: bf16 GEMM result, then every elementwise step in bf16.
    y = jnp.matmul(x, weight) + bias
    y = y * scaling_factor
    y = jnp.clip(y, hardtanh_min, hardtanh_max)
    # GELU, tanh form, written out as in the original translation.
    return y * 0.5 * (1.0 + jnp.tanh(0.7978845608028654 * (y + 0.044715 * y**3)))


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 12 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="35k",
    slug="35k-gemm-scaling-hardtanh-gelu",
    public_name="35k_Gemm_Scaling_Hardtanh_GELU",
    title="GEMM + scaling + Hardtanh + GELU",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b) whose output is scaled by 0.5, clipped to "
    "[-2, 2] (Hardtanh) and passed through the tanh-approximation GELU.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 4096,
            "in_features": 8192,
            "out_features": 8192,
            "scaling_factor": 0.5,
            "hardtanh_min": -2.0,
            "hardtanh_max": 2.0,
        },
        "small": {
            "batch_size": 128,
            "in_features": 8192,
            "out_features": 512,
            "scaling_factor": 0.5,
            "hardtanh_min": -2.0,
            "hardtanh_max": 2.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=53,
    notes="Weight stored (in_features, out_features) as in the public suite, i.e. the "
    "transpose of nn.Linear.weight. The clip is reached only by GEMM outputs beyond "
    "+-4 (a few in 10^4 elements with these inputs).",
    upstream=Upstream(
        file="JAXBench/benchmark/35k_Gemm_Scaling_Hardtanh_GELU/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
