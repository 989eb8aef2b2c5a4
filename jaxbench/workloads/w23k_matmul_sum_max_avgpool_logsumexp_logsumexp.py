"""23k Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp (KernelBench L2 problem 18)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    weight = normal_bf16(kw, (fout, fin), 0.02)  # (out, in)
    # N(0, 1) rather than 0.02 N: the bias enters only through its sum, which would
    # otherwise stay below the tolerance of outputs in the hundreds.
    bias = normal_bf16(kb, (fout,))
    return x, weight, bias


def reference(x, weight, bias):
    y = jnp.matmul(x, weight.T) + bias
    y = jnp.sum(y, axis=1, keepdims=True)  # (batch, 1)
    # Each of the following reduces over the remaining length-1 axis (identities).
    y = jnp.max(y, axis=1, keepdims=True)
    y = jnp.mean(y, axis=1, keepdims=True)
    y = jax.nn.logsumexp(y, axis=1, keepdims=True)
    return jax.nn.logsumexp(y, axis=1, keepdims=True)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 2 * b * n + 12 * b
    return flops, 2 * (b * k + k * n + n + b)


DEGENERATE = (
    "The sum over the output features leaves a length-1 axis, so the max, the "
    "mean and both logsumexps of the original are identities: the output is the "
    "row sum of x @ W^T + b (every input still matters)."
)

WORKLOAD = Workload(
    id="23k",
    slug="23k-matmul-sum-max-avgpool-logsumexp-logsumexp",
    public_name="23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp",
    title="Matmul + sum + max + avgpool + logsumexp + logsumexp",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W^T + b) summed over its output features; the max, mean "
    "and two logsumexps that follow all reduce over a length-1 axis, so the "
    "result is the row sum, one value per row.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {"batch_size": 4096, "in_features": 8192, "out_features": 8192},
        "small": {"batch_size": 128, "in_features": 8192, "out_features": 512},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=18,
    degenerate=DEGENERATE,
    notes="Weight stored (out_features, in_features) as nn.Linear.weight. Output "
    "(batch, 1), mathematically x @ (sum of the weight rows) + sum(b). The bias is "
    "drawn from N(0, 1) (public: 0.02 N) so that it changes the output beyond the "
    "tolerance.",
    upstream=Upstream(
        file="JAXBench/benchmark/23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "degenerate",
            "The original's reductions over a length-1 axis are kept as they are (identities); "
            "the workload is marked degenerate.",
            DEGENERATE,
        ),
        Deviation(
            "inputs",
            "bias ~ N(0, 1) (public: N(0, 1) x 0.02).",
            "The bias enters only through its sum, which would otherwise stay below the tolerance "
            "of outputs in the hundreds.",
        ),
    ),
)
