"""49k Matmul_AvgPool_GELU_Scale_Max (KernelBench L2 problem 98)."""

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
    # 0.2 N (public: 0.02 N): averaged over 16 features a 0.02 bias moves the output by less
    # than the tolerance, so a kernel that dropped the bias would pass.
    bias = normal_bf16(kb, (fout,), 0.2)
    return x, weight, bias


def reference(x, weight, bias, *, pool_kernel_size, scale_factor):
    y = jnp.matmul(x, weight) + bias
    b, n = y.shape
    # AvgPool1d over the features: window = stride = pool_kernel_size, no padding.
    # Window sum (float32 accumulation, bf16 result) divided by the window size.
    y = y[:, : (n // pool_kernel_size) * pool_kernel_size]
    y = jnp.sum(y.reshape(b, n // pool_kernel_size, pool_kernel_size), axis=2)
    y = y / pool_kernel_size
    y = jax.nn.gelu(y)
    y = y * scale_factor
    return jnp.max(y, axis=1)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    p = n // cfg["pool_kernel_size"]
    flops = 2 * b * k * n + 2 * b * n + 12 * b * p
    return flops, 2 * (b * k + k * n + n + b)


WORKLOAD = Workload(
    id="49k",
    slug="49k-matmul-avgpool-gelu-scale-max",
    public_name="49k_Matmul_AvgPool_GELU_Scale_Max",
    title="Matmul + average pool + GELU + scale + max",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer, 1-D average pooling over windows of 16 features, the "
    "tanh-form GELU, a scale by 2 and the maximum over the pooled features of "
    "each row (output shape (batch,)).",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 4096,
            "in_features": 8192,
            "out_features": 8192,
            "pool_kernel_size": 16,
            "scale_factor": 2.0,
        },
        "small": {
            "batch_size": 128,
            "in_features": 8192,
            "out_features": 512,
            "pool_kernel_size": 16,
            "scale_factor": 2.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=98,
    notes="Weight stored (in_features, out_features) as in the public suite, i.e. the "
    "transpose of nn.Linear.weight. Bias drawn as 0.2 N (public: 0.02 N, whose "
    "16-feature averages change the output by less than the tolerance).",
    upstream=Upstream(
        file="JAXBench/benchmark/49k_Matmul_AvgPool_GELU_Scale_Max/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "inputs",
            "bias N(0, 1) x 0.2 (public: x 0.02).",
            "Averaged over 16 features a 0.02 bias moves the output by less than the tolerance, "
            "so a kernel that dropped the bias would pass.",
        ),
    ),
)
