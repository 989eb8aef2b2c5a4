"""51d Gated RMSNorm: a level-2 workload with ten input configurations, defined in the tests.

DeepSeek-style output normalisation: RMSNorm of x over the hidden axis (float32 statistics),
a learned scale, times SiLU of a gate. Ten (tokens, hidden) configurations per profile, as a
level-2 workload declares them; registered only through ``JAXBENCH_EXTRA_WORKLOADS``.
"""

import jax
import jax.numpy as jnp
from jax import lax

from jaxbench.workloads._inputs import normal_bf16
from jaxbench.workloads.base import Workload

_SMALL = [(8, 128), (16, 128), (32, 128), (64, 128), (8, 256), (16, 256), (32, 256), (24, 128), (40, 256), (128, 128)]
_FULL = [(t * 64, h * 8) for t, h in _SMALL]


def create_inputs(cfg, key):
    kx, kg, ks = jax.random.split(key, 3)
    shape = (cfg["tokens"], cfg["hidden"])
    x = normal_bf16(kx, shape)
    gate = normal_bf16(kg, shape)
    scale = normal_bf16(ks, (cfg["hidden"],), scale=0.1, shift=1.0)
    return x, gate, scale


def reference(x, gate, scale, *, epsilon):
    xf = x.astype(jnp.float32)
    mean2 = jnp.mean(lax.square(xf), axis=-1, keepdims=True)
    normed = (xf * lax.rsqrt(mean2 + epsilon)).astype(x.dtype) * scale
    return normed * jax.nn.silu(gate)


def cost(cfg):
    n = cfg["tokens"] * cfg["hidden"]
    return 10 * n, 2 * 3 * n + 2 * cfg["hidden"]


WORKLOAD = Workload(
    id="51d",
    slug="51d-gated-rmsnorm",
    public_name="51d_Gated_RMSNorm",
    title="Gated RMSNorm (test level 2)",
    source="deepseek-v4",
    model="DeepSeek-V4 (test)",
    category="normalization",
    description="RMSNorm over the hidden axis with float32 statistics and a learned scale, "
    "multiplied by SiLU(gate); ten (tokens, hidden) configurations.",
    input_names=("x", "gate", "scale"),
    profiles={"full": {"epsilon": 1e-6}, "small": {"epsilon": 1e-6}},
    configurations={
        "full": {f"c{i:02d}": {"tokens": t, "hidden": h} for i, (t, h) in enumerate(_FULL, 1)},
        "small": {f"c{i:02d}": {"tokens": t, "hidden": h} for i, (t, h) in enumerate(_SMALL, 1)},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    level=2,
    version=1,
)
