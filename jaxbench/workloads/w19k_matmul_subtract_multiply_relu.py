"""19k Matmul_Subtract_Multiply_ReLU (KernelBench L2 problem 9)."""

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
    # N(0, 1) rather than 0.02 N: with a small bias almost every GEMM output stays below
    # 2.0 and the ReLU leaves a nearly all-zero output (the original's default init gives
    # exactly zero); this way about 8% of the outputs are positive.
    bias = normal_bf16(kb, (fout,))
    return x, weight, bias


def reference(x, weight, bias, *, subtract_value, multiply_value):
    # Sensitive workload: the GEMM result is rounded to bf16 and every following step is a
    # bf16 operation (subtracting 2.0 from values near 2 magnifies earlier rounding).
    y = jnp.matmul(x, weight) + bias
    y = y - subtract_value
    y = y * multiply_value
    return jax.nn.relu(y)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 4 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="19k",
    slug="19k-matmul-subtract-multiply-relu",
    public_name="19k_Matmul_Subtract_Multiply_ReLU",
    title="Matmul + subtract + multiply + ReLU",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b) followed by subtracting 2.0, multiplying by 1.5 and a ReLU.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 4096,
            "in_features": 8192,
            "out_features": 8192,
            "subtract_value": 2.0,
            "multiply_value": 1.5,
        },
        "small": {
            "batch_size": 128,
            "in_features": 8192,
            "out_features": 512,
            "subtract_value": 2.0,
            "multiply_value": 1.5,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=9,
    notes="Weight stored (in_features, out_features) as in the public suite, i.e. the "
    "transpose of nn.Linear.weight. The bias is drawn from N(0, 1) (public: 0.02 N) so "
    "that a fair share of the outputs (about 9%) is nonzero. Sensitive: an "
    "f32-internal computation differs from this bf16 flow by more than the tolerance "
    "on about 0.4% of the outputs.",
    upstream=Upstream(
        file="JAXBench/benchmark/19k_Matmul_Subtract_Multiply_ReLU/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "inputs",
            "bias ~ N(0, 1) (public: N(0, 1) x 0.02).",
            "With a small bias almost every GEMM output stays below 2.0 and the ReLU leaves a "
            "nearly all-zero output; this way about 9% of the outputs are positive.",
        ),
    ),
)
