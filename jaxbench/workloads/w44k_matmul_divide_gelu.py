"""44k Matmul_Divide_GELU (KernelBench L2 problem 86)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    batch, fin, fout = cfg["batch_size"], cfg["input_size"], cfg["output_size"]
    x = jax.random.uniform(kx, (batch, fin), dtype=jnp.bfloat16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    # 0.5 N (public: 0.02 N): after the division by 10 a 0.02 bias moves the output by ~1e-3,
    # far below the tolerance, so a kernel that dropped the bias would pass.
    bias = normal_bf16(kb, (fout,), 0.5)
    return x, weight, bias


def reference(x, weight, bias, *, divisor):
    y = jnp.matmul(x, weight) + bias
    y = y / divisor
    return jax.nn.gelu(y)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["input_size"], cfg["output_size"]
    flops = 2 * b * k * n + 10 * b * n
    return flops, 2 * (b * k + k * n + n + b * n)


WORKLOAD = Workload(
    id="44k",
    slug="44k-matmul-divide-gelu",
    public_name="44k_Matmul_Divide_GELU",
    title="Matmul + divide + GELU",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer (x @ W + b), a division by 10 and the tanh-form GELU.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {"batch_size": 4096, "input_size": 8192, "output_size": 8192, "divisor": 10.0},
        "small": {"batch_size": 128, "input_size": 8192, "output_size": 512, "divisor": 10.0},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=86,
    notes="Weight stored (input_size, output_size) as in the public suite, i.e. the "
    "transpose of nn.Linear.weight. Bias drawn as 0.5 N (public: 0.02 N, which the "
    "division by 10 puts far below the tolerance).",
    upstream=Upstream(
        file="JAXBench/benchmark/44k_Matmul_Divide_GELU/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "inputs",
            "bias N(0, 1) x 0.5 (public: x 0.02).",
            "After the division by 10 a 0.02 bias moves the output by ~1e-3, far below the "
            "tolerance, so a kernel that dropped the bias would pass.",
        ),
    ),
)
