"""5p Flex attention: causal attention with an additive per-head score bias (a score_mod),
Llama-3.1-70B shapes (MaxText attention_op)."""

import jax
import jax.numpy as jnp
from jax import lax

from .base import Workload
from .upstream import Deviation, Upstream

MASK_VALUE = -1e30
BIAS_SCALE = 0.5


def create_inputs(cfg, key):
    kq, kk, kv, kb = jax.random.split(key, 4)
    b, h, s, d = cfg["batch"], cfg["num_heads"], cfg["seq_len"], cfg["head_dim"]
    # The public suite draws k, v x 0.02 and the bias x 0.01: the logits are then ~0.02 and the
    # bias changes the probabilities by ~1%, below the tolerance, so a kernel that ignored the
    # score_mod (or the scores) would pass. Here q, k, v ~ N(0,1) and the bias ~ N(0,1) x 0.5,
    # so every term matters.
    q = jax.random.normal(kq, (b, h, s, d), dtype=jnp.bfloat16)
    k = jax.random.normal(kk, (b, h, s, d), dtype=jnp.bfloat16)
    v = jax.random.normal(kv, (b, h, s, d), dtype=jnp.bfloat16)
    rel_pos_bias = jax.random.normal(kb, (h, s, s), dtype=jnp.bfloat16) * BIAS_SCALE
    return q, k, v, rel_pos_bias


def reference(q, k, v, rel_pos_bias):
    # Scores rounded to bf16, scaled (bf16), bias added (bf16), THEN the causal mask replaces
    # masked entries by -1e30, softmax in bf16.
    s, d = q.shape[2], q.shape[3]
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) * (d**-0.5)
    scores = scores + rel_pos_bias[None]
    rows = lax.broadcasted_iota(jnp.int32, (s, s), 0)
    cols = lax.broadcasted_iota(jnp.int32, (s, s), 1)
    scores = jnp.where(cols <= rows, scores, MASK_VALUE)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", probs, v)


def cost(cfg):
    b, h, s, d = cfg["batch"], cfg["num_heads"], cfg["seq_len"], cfg["head_dim"]
    # Causal: only the s*(s+1)/2 pairs on or below the diagonal are needed; per pair
    # 4*d (q.k and p.v) + ~6 (scale, bias add, max, exp, sum, divide).
    pairs = b * h * s * (s + 1) // 2
    flops = pairs * (4 * d + 6)
    # q, k, v, output, and the lower triangle of the bias (read once, shared by the batch).
    nbytes = 2 * (4 * b * h * s * d + h * s * (s + 1) // 2)
    return flops, nbytes


WORKLOAD = Workload(
    id="5p",
    slug="5p-flex-attention",
    public_name="5p_Flex_Attention",
    title="Flex attention (causal + relative position bias)",
    source="maxtext",
    model="Llama-3.1-70B",
    category="attention",
    description="Causal multi-head attention with a score modification, as in PyTorch's "
    "flex_attention: a dense learned bias per head and (query, key) pair is added to "
    "the scaled scores before the causal mask and softmax.",
    input_names=("q", "k", "v", "rel_pos_bias"),
    profiles={
        "full": {"batch": 4, "seq_len": 4096, "num_heads": 64, "head_dim": 128},
        "small": {"batch": 2, "seq_len": 512, "num_heads": 4, "head_dim": 128},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="Layout (batch, heads, seq, head_dim); rel_pos_bias is (heads, seq, seq), shared by "
    "the batch, a dense tensor (not a function of i - j). Order: bf16 scores times "
    "head_dim**-0.5, + bias, then masked entries (key after query) replaced by -1e30. "
    "Inputs differ from the public suite's scales (see create_inputs): q, k, v ~ N(0,1), "
    "bias ~ N(0,1) x 0.5."
    " Precision: the baseline rounds q.k to bf16 (spacing 0.25 for |q.k| in [32, 64)) and "
    "again after scaling; a kernel that keeps float32 scores can differ by slightly more "
    "than the tolerance on a few elements of rows with few keys (near the start of "
    "the sequence): round the scores as the baseline does to match everywhere.",
    upstream=Upstream(
        file="JAXBench/benchmark/5p_Flex_Attention/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "inputs",
            "k and v ~ N(0, 1), rel_pos_bias ~ N(0, 1) x 0.5 (public: k, v x 0.02, bias x 0.01).",
            "With the public scales the logits are ~0.02 and the bias changes the probabilities "
            "by ~1%, below the tolerance, so a kernel that ignored the score_mod (or the scores) "
            "would pass.",
        ),
    ),
)
