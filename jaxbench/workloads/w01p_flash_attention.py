"""1p Flash attention: causal multi-head attention (Llama-3.1-70B shapes, MaxText attention)."""

import jax
import jax.numpy as jnp
from jax import lax

from .base import Workload
from .upstream import Upstream

MASK_VALUE = -1e9


def create_inputs(cfg, key):
    kq, kk, kv = jax.random.split(key, 3)
    shape = (cfg["batch"], cfg["num_heads"], cfg["seq_len"], cfg["head_dim"])
    query = jax.random.normal(kq, shape, dtype=jnp.bfloat16)
    key_ = jax.random.normal(kk, shape, dtype=jnp.bfloat16)
    value = jax.random.normal(kv, shape, dtype=jnp.bfloat16)
    return query, key_, value


def reference(query, key, value):
    # Layout (batch, heads, seq, head_dim). Scores are rounded to the input dtype, scaled in
    # that dtype, masked (key position > query position) with -1e9, softmax in the input dtype.
    seq, head_dim = query.shape[2], query.shape[3]
    scores = jnp.einsum("bhqd,bhkd->bhqk", query, key) * (head_dim**-0.5)
    rows = lax.broadcasted_iota(jnp.int32, (seq, seq), 0)
    cols = lax.broadcasted_iota(jnp.int32, (seq, seq), 1)
    scores = jnp.where(cols <= rows, scores, MASK_VALUE)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", probs, value)


def cost(cfg):
    b, h, s, d = cfg["batch"], cfg["num_heads"], cfg["seq_len"], cfg["head_dim"]
    # Causal: only the s*(s+1)/2 (query, key) pairs on or below the diagonal are needed (a
    # kernel skips the masked blocks); per pair 2*d for q.k, 2*d for p.v, ~5 for
    # scale/max/exp/sum/divide.
    pairs = b * h * s * (s + 1) // 2
    flops = pairs * (4 * d + 5)
    nbytes = 2 * (4 * b * h * s * d)  # q, k, v read once, output written once (bf16)
    return flops, nbytes


WORKLOAD = Workload(
    id="1p",
    slug="1p-flash-attention",
    public_name="1p_Flash_Attention",
    title="Flash attention (causal MHA)",
    source="maxtext",
    model="Llama-3.1-70B",
    category="attention",
    description="Causal multi-head scaled dot-product attention over 64 heads of dimension 128 "
    "and a 4096-token sequence: softmax(QK^T / sqrt(d), causal) V, the operation a "
    "flash-attention kernel computes blockwise.",
    input_names=("query", "key", "value"),
    profiles={
        "full": {"batch": 4, "seq_len": 4096, "num_heads": 64, "head_dim": 128},
        "small": {"batch": 2, "seq_len": 512, "num_heads": 4, "head_dim": 128},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    expert=True,
    notes="Layout (batch, heads, seq, head_dim) for q, k, v and the output; inputs N(0,1) bf16. "
    "Scores q.k are rounded to bf16 and multiplied by head_dim**-0.5; key positions "
    "after the query position are replaced by -1e9 before the softmax (no other mask, "
    "no softcap). Sizes come from the input shapes."
    " Precision: the baseline rounds q.k to bf16 (spacing 0.25 for |q.k| in [32, 64)) and "
    "again after scaling; a kernel that keeps float32 scores can differ by slightly more "
    "than the tolerance on a few elements of rows with few keys (near the start of "
    "the sequence): round the scores as the baseline does to match everywhere.",
    upstream=Upstream(
        file="JAXBench/benchmark/1p_Flash_Attention/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(),
)
