"""47k Matmul_Add_Swish_Tanh_GELU_Hardtanh (KernelBench L2 problem 95)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    kx, kw, kb, ka = jax.random.split(key, 4)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    bias = normal_bf16(kb, (fout,), 0.02)
    add_value = normal_bf16(ka, (fout,), 0.02)
    return x, weight, bias, add_value


def reference(x, weight, bias, add_value, *, hardtanh_min, hardtanh_max):
    y = jnp.matmul(x, weight) + bias
    y = y + add_value
    y = y * jax.nn.sigmoid(y)  # Swish
    y = jnp.tanh(y)
    y = jax.nn.gelu(y)
    return jnp.clip(y, hardtanh_min, hardtanh_max)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 18 * b * n
    return flops, 2 * (b * k + k * n + 2 * n + b * n)


WORKLOAD = Workload(
    id="47k",
    slug="47k-matmul-add-swish-tanh-gelu-hardtanh",
    public_name="47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    title="Matmul + add + Swish + tanh + GELU + Hardtanh",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b), a per-feature add, then Swish, tanh, the "
    "tanh-form GELU and a clip to [-1, 1] (Hardtanh).",
    input_names=("x", "weight", "bias", "add_value"),
    profiles={
        "full": {
            "batch_size": 4096,
            "in_features": 8192,
            "out_features": 8192,
            "hardtanh_min": -1.0,
            "hardtanh_max": 1.0,
        },
        "small": {
            "batch_size": 128,
            "in_features": 8192,
            "out_features": 512,
            "hardtanh_min": -1.0,
            "hardtanh_max": 1.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=95,
    notes="The final clip never binds: tanh of a Swish lies in (-0.28, 1) and its GELU in "
    "about (-0.11, 0.85), so a kernel may drop it. Weight stored "
    "(in_features, out_features) as in the public suite.",
    upstream=Upstream(
        file="JAXBench/benchmark/47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
