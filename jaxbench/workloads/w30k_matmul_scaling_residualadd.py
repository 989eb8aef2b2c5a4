"""30k Matmul_Scaling_ResidualAdd (KernelBench L2 problem 40)."""

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


def reference(x, weight, bias, *, scaling_factor):
    y = jnp.matmul(x, weight) + bias
    return y * scaling_factor + y


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 3 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="30k",
    slug="30k-matmul-scaling-residualadd",
    public_name="30k_Matmul_Scaling_ResidualAdd",
    title="Matmul + scaling + residual add",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b) whose output y is scaled by 0.5 and added back to itself: y * 0.5 + y.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {"batch_size": 16384, "in_features": 4096, "out_features": 4096, "scaling_factor": 0.5},
        "small": {"batch_size": 128, "in_features": 4096, "out_features": 512, "scaling_factor": 0.5},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=40,
    notes="Weight stored (in_features, out_features) as in the public suite, i.e. the transpose of nn.Linear.weight.",
    upstream=Upstream(
        file="JAXBench/benchmark/30k_Matmul_Scaling_ResidualAdd/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
