"""37k Matmul_Swish_Scaling (KernelBench L2 problem 59)."""

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
    # Precision-sensitive: GEMM result rounded to bf16, bias add and Swish in bf16.
    y = jnp.matmul(x, weight) + bias
    y = y * jax.nn.sigmoid(y)
    return y * scaling_factor


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 7 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="37k",
    slug="37k-matmul-swish-scaling",
    public_name="37k_Matmul_Swish_Scaling",
    title="Matmul + Swish + scaling",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b) followed by Swish (y * sigmoid(y)) and a multiplication by 2.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {"batch_size": 4096, "in_features": 8192, "out_features": 8192, "scaling_factor": 2.0},
        "small": {"batch_size": 128, "in_features": 8192, "out_features": 512, "scaling_factor": 2.0},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=59,
    notes="Weight stored (in_features, out_features) as in the public suite, i.e. the "
    "transpose of nn.Linear.weight. Precision-sensitive: the reference rounds the "
    "GEMM output to bf16 and runs the elementwise steps in bf16.",
    upstream=Upstream(
        file="JAXBench/benchmark/37k_Matmul_Swish_Scaling/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
