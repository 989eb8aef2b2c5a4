"""36k Matmul_Sigmoid_Sum (KernelBench L2 problem 56)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    batch, fin, fout = cfg["batch_size"], cfg["input_size"], cfg["hidden_size"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    bias = normal_bf16(kb, (fout,), 0.02)
    return x, weight, bias


def reference(x, weight, bias):
    y = jnp.matmul(x, weight) + bias
    y = jax.nn.sigmoid(y)
    # bf16 sum: accumulated in float32, rounded once to bf16.
    return jnp.sum(y, axis=1, keepdims=True)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["input_size"], cfg["hidden_size"]
    flops = 2 * b * k * n + 6 * b * n
    return flops, 2 * (b * k + k * n + n + b)


DEGENERATE = (
    "Each output is a sum of hidden_size sigmoids, about hidden_size / 2 (256 at "
    "small, 4096 at full), compared with a 1e-2 relative tolerance (2.6, 41) and "
    "stored in bf16 (spacing 1-2, 16-32). The bias only shifts every row sum by "
    "sum_j sigmoid'(y_ij) b_j, about 0.1-0.5: it does not affect the output beyond "
    "rounding, and no input scale changes that (the shift is a sum of per-feature "
    "terms of random sign). At full size the rows also differ by only about +-11 "
    "against a tolerance of +-41, so x is checked weakly there (a per-weight "
    "constant passes most rows); the small profile checks it."
)

WORKLOAD = Workload(
    id="36k",
    slug="36k-matmul-sigmoid-sum",
    public_name="36k_Matmul_Sigmoid_Sum",
    title="Matmul + sigmoid + row sum",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b), a sigmoid, and a sum over the features that "
    "reduces each row to one value (output shape (batch, 1)).",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {"batch_size": 4096, "input_size": 8192, "hidden_size": 8192},
        "small": {"batch_size": 128, "input_size": 8192, "hidden_size": 512},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=56,
    degenerate=DEGENERATE,
    insensitive_inputs=("bias",),
    notes="Weight stored (input_size, hidden_size) as in the public suite, i.e. the transpose of nn.Linear.weight.",
    upstream=Upstream(
        file="JAXBench/benchmark/36k_Matmul_Sigmoid_Sum/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "degenerate",
            "The published computation is kept; the workload is marked degenerate and the bias is "
            "declared insensitive.",
            DEGENERATE,
        ),
    ),
)
