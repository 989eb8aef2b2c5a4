"""12p RMSNorm (Llama-3.1-70B pre-attention normalisation, MaxText normalizations.py)."""

import jax
import jax.numpy as jnp
from jax import lax

from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    k1, k2 = jax.random.split(key, 2)
    shape = (cfg["batch"], cfg["seq_len"], cfg["emb_dim"])
    x = jax.random.normal(k1, shape, dtype=jnp.bfloat16)
    scale = jax.random.normal(k2, (cfg["emb_dim"],), dtype=jnp.bfloat16) * 0.1 + 1.0
    return x, scale


def reference(x, scale, *, epsilon):
    # Statistics in float32, normalised value rounded back to the input dtype before scaling.
    xf = x.astype(jnp.float32)
    mean2 = jnp.mean(lax.square(xf), axis=-1, keepdims=True)
    normed = (xf * lax.rsqrt(mean2 + epsilon)).astype(x.dtype)
    return normed * scale


def cost(cfg):
    n = cfg["batch"] * cfg["seq_len"] * cfg["emb_dim"]
    return 5 * n, 2 * (2 * n) + 2 * cfg["emb_dim"]


WORKLOAD = Workload(
    id="12p",
    slug="12p-rmsnorm",
    public_name="12p_RMSNorm",
    title="RMSNorm",
    source="maxtext",
    model="Llama-3.1-70B",
    category="normalization",
    description="Root-mean-square layer normalisation over the embedding axis, float32 "
    "statistics, eps 1e-5, then a learned per-channel scale.",
    input_names=("x", "scale"),
    profiles={
        "full": {"batch": 8, "seq_len": 4096, "emb_dim": 8192, "epsilon": 1e-5},
        "small": {"batch": 2, "seq_len": 256, "emb_dim": 512, "epsilon": 1e-5},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="As in the public baseline: x ~ N(0,1), scale ~ N(0,1) x 0.1 + 1; the mean of "
    "squares and the normalisation are float32, the normalised value is rounded to bf16 "
    "before the bf16 multiplication by the scale; epsilon (1e-5) is read from CONFIG.",
    upstream=Upstream(
        file="JAXBench/benchmark/12p_RMSNorm/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(),
)
