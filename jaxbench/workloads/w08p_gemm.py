"""8p GEMM: dense bf16 matmul at the Llama-3.1-70B FFN up-projection shape."""

import jax
import jax.numpy as jnp

from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    ka, kb = jax.random.split(key, 2)
    a = jax.random.normal(ka, (cfg["M"], cfg["K"]), dtype=jnp.bfloat16)
    b = jax.random.normal(kb, (cfg["K"], cfg["N"]), dtype=jnp.bfloat16) * 0.02
    return a, b


def reference(a, b):
    # bf16 operands, float32 accumulation, bf16 result.
    return jnp.dot(a, b)


def cost(cfg):
    m, k, n = cfg["M"], cfg["K"], cfg["N"]
    return 2 * m * k * n, 2 * (m * k + k * n + m * n)


WORKLOAD = Workload(
    id="8p",
    slug="8p-gemm",
    public_name="8p_GEMM",
    title="GEMM",
    source="maxtext",
    model="Llama-3.1-70B",
    category="matmul",
    description="Dense bf16 matrix multiplication C = A @ B at the Llama-3.1-70B feed-forward "
    "shape (8192 x 8192 times 8192 x 28672). XLA already runs it close to the "
    "matrix units' peak, so there is little headroom.",
    input_names=("A", "B"),
    profiles={
        "full": {"M": 8192, "K": 8192, "N": 28672},
        "small": {"M": 512, "K": 512, "N": 1792},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    expert=True,
    notes="A is (M, K) row-major, B is (K, N) (not transposed); A ~ N(0,1), B ~ N(0,1) x 0.02, "
    "bf16. The output is bf16, accumulated in float32. N / K = 3.5 in both profiles.",
    upstream=Upstream(
        file="JAXBench/benchmark/8p_GEMM/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(),
)
