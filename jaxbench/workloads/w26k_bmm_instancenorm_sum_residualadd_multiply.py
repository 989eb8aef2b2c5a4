"""26k BMM_InstanceNorm_Sum_ResidualAdd_Multiply (KernelBench L2 problem 28)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, ky, kw, kbb, kg, kb = jax.random.split(key, 6)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (batch, fin), dtype=bf16)
    y = jax.random.uniform(ky, (batch, fout), dtype=bf16)
    bmm_weight = normal_bf16(kw, (fout, fin), 0.02)  # (out, in)
    bmm_bias = normal_bf16(kbb, (fout,), 0.02)
    in_weight = normal_bf16(kg, (fout,), 0.1, shift=1.0)
    in_bias = normal_bf16(kb, (fout,), 0.1)
    return x, y, bmm_weight, bmm_bias, in_weight, in_bias


def reference(x, y, bmm_weight, bmm_bias, in_weight, in_bias, *, eps):
    h = jnp.matmul(x, bmm_weight.T) + bmm_bias
    # Instance norm of h viewed as (N, C, 1, 1): statistics over a 1x1 extent, so the
    # normalised value is exactly 0 and only the affine bias survives.
    h = h[:, :, None, None]
    mean = jnp.mean(h, axis=(2, 3), keepdims=True)
    var = jnp.var(h, axis=(2, 3), keepdims=True)
    h = (h - mean) / jnp.sqrt(var + eps)
    h = h * in_weight[None, :, None, None] + in_bias[None, :, None, None]
    h = h[:, :, 0, 0]
    h = h + y
    return h * y


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 10 * b * n
    return flops, 2 * (b * k + k * n + 3 * n + 2 * b * n)


DEGENERATE = (
    "The instance norm runs over a 1x1 spatial extent: mean = value and var = 0, "
    "so the normalised value is exactly 0 and the output is (in_bias + y) * y; "
    "x, the linear layer (bmm_weight, bmm_bias) and in_weight do not matter."
)

WORKLOAD = Workload(
    id="26k",
    slug="26k-bmm-instancenorm-sum-residualadd-multiply",
    public_name="26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply",
    title="BMM + InstanceNorm + sum + residual add + multiply",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer on x, instance normalisation of its output viewed as "
    "(N, C, 1, 1) with a per-channel affine, then + y and * y. Normalising over a "
    "1x1 extent gives exactly zero, so the result is (in_bias + y) * y.",
    input_names=("x", "y", "bmm_weight", "bmm_bias", "in_weight", "in_bias"),
    profiles={
        "full": {"batch_size": 4096, "in_features": 8192, "out_features": 8192, "eps": 1e-5},
        "small": {"batch_size": 128, "in_features": 8192, "out_features": 512, "eps": 1e-5},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=28,
    degenerate=DEGENERATE,
    insensitive_inputs=("x", "bmm_weight", "bmm_bias", "in_weight"),
    notes="Semantics of the public suite, which views the linear output as (N, C, 1, 1). The "
    "original KernelBench model unsqueezes to (N, 1, 1, C) instead, i.e. normalises "
    "each row over its C features (with a channel-count warning and no affine), which "
    "is not degenerate. Weight stored (out_features, in_features) as nn.Linear.weight; "
    "in_weight 1 + 0.1 N and in_bias 0.1 N are random (public: ones and 0.02 N).",
    upstream=Upstream(
        file="JAXBench/benchmark/26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "degenerate",
            "The public suite's (N, C, 1, 1) view is kept (the output is (in_bias + y) * y); the "
            "workload is marked degenerate and x, bmm_weight, bmm_bias and in_weight are declared "
            "insensitive.",
            DEGENERATE,
        ),
        Deviation(
            "inputs",
            "in_weight 1 + 0.1 N and in_bias 0.1 N (public: ones and N(0, 1) x 0.02).",
            'the input policy of WORKLOADS.md, "Conventions": weights N(0, 1) x 0.02 as in the '
            "other public files, and no all-zero or constant parameters, so that every input the "
            "output depends on changes it beyond the tolerance.",
        ),
    ),
)
