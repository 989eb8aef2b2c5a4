"""16p Mamba-2 state-space duality (SSD), quadratic (attention-like) form (Mamba-2-2.7B)."""

import jax
import jax.numpy as jnp

from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    kc, kb, kx, ka = jax.random.split(key, 4)
    shape = (cfg["batch"], cfg["num_heads"], cfg["seq_len"], cfg["head_dim"])
    c = jax.random.normal(kc, shape, dtype=jnp.bfloat16)
    b = jax.random.normal(kb, shape, dtype=jnp.bfloat16)
    x = jax.random.normal(kx, shape, dtype=jnp.bfloat16)
    # float32 always, as in the public suite: a = sigmoid(A_log) is about 0.018.
    a_log = jax.random.normal(ka, shape[:3], dtype=jnp.float32) * 0.5 - 4.0
    return c, b, x, a_log


def reference(query, key, value, A_log):
    s = query.shape[2]
    # Per-step decay a = sigmoid(A_log); L[i,j] = prod_{j<t<=i} a_t via a cumulative sum of
    # logs, zero above the diagonal (exp of -1e30).
    log_a = jnp.log(jax.nn.sigmoid(A_log.astype(jnp.float32)) + 1e-8)
    cum = jnp.cumsum(log_a, axis=-1)
    causal = jnp.arange(s)[:, None] >= jnp.arange(s)[None, :]
    decay = jnp.exp(jnp.where(causal, cum[..., :, None] - cum[..., None, :], -1e30))
    scores = jnp.einsum("bhid,bhjd->bhij", query.astype(jnp.float32), key.astype(jnp.float32))
    scores = scores * decay
    # Signed row sum, 1 where it is nearly zero, then divide by max(|sum|, 1).
    total = jnp.sum(scores, axis=-1, keepdims=True)
    total = jnp.where(jnp.abs(total) < 1e-6, 1.0, total)
    scores = scores / jnp.maximum(jnp.abs(total), 1.0)
    return jnp.einsum("bhij,bhjd->bhid", scores.astype(query.dtype), value)


def cost(cfg):
    b, h, s, d = cfg["batch"], cfg["num_heads"], cfg["seq_len"], cfg["head_dim"]
    pairs = b * h * s * (s + 1) // 2  # causal: j <= i only
    flops = 4 * pairs * d + 6 * pairs + 4 * b * h * s
    nbytes = 2 * 4 * b * h * s * d + 4 * b * h * s
    return flops, nbytes


WORKLOAD = Workload(
    id="16p",
    slug="16p-mamba2-ssd",
    public_name="16p_Mamba2_SSD",
    title="Mamba-2 SSD (quadratic form)",
    source="maxtext",
    model="Mamba-2-2.7B",
    category="recurrent",
    description="Mamba-2's state-space duality written as masked attention: float32 scores "
    "C.B weighted by the selective decay L[i,j] = prod a_t (a = sigmoid(A_log)), "
    "normalised by the clamped signed row sum, times x.",
    input_names=("query", "key", "value", "A_log"),
    profiles={
        "full": {"batch": 4, "seq_len": 4096, "num_heads": 64, "head_dim": 64, "d_state": 128, "d_model": 2560},
        # head_dim as in full; heads are independent, so fewer of them (d_state and d_model
        # are unused by the computation, as in the public file).
        "small": {"batch": 1, "seq_len": 256, "num_heads": 16, "head_dim": 64, "d_state": 128, "d_model": 640},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="As in the public baseline: a = sigmoid(A_log) (the docstring's exp is not what "
    "the code does), A_log ~ N(-4, 0.5^2) in float32, so a is about 0.018 and the "
    "decay matrix is nearly diagonal; the signed row sum s_i is replaced by 1 where "
    "|s_i| < 1e-6 and rows are divided by max(|s_i|, 1). Scores are rounded to bf16 "
    "before the product with x (bf16 result). In SSD terms query, key and value are C, B "
    "and x. The cost counts the causal half.",
    upstream=Upstream(
        file="JAXBench/benchmark/16p_Mamba2_SSD/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(),
)
