"""2p Grouped-query attention: causal GQA at Llama-3.1-405B shapes (MaxText attention)."""

import jax
import jax.numpy as jnp
from jax import lax

from .base import Workload
from .upstream import Upstream

MASK_VALUE = -1e9


def create_inputs(cfg, key):
    kq, kk, kv = jax.random.split(key, 3)
    b, s, d = cfg["batch"], cfg["seq_len"], cfg["head_dim"]
    query = jax.random.normal(kq, (b, s, cfg["num_query_heads"], d), dtype=jnp.bfloat16)
    key_ = jax.random.normal(kk, (b, s, cfg["num_kv_heads"], d), dtype=jnp.bfloat16)
    value = jax.random.normal(kv, (b, s, cfg["num_kv_heads"], d), dtype=jnp.bfloat16)
    return query, key_, value


def _repeat_heads(x, groups):
    # (b, s, hkv, d) -> (b, s, hkv * groups, d); query head h reads KV head h // groups.
    b, s, hkv, d = x.shape
    x = jnp.broadcast_to(x[:, :, :, None, :], (b, s, hkv, groups, d))
    return x.reshape(b, s, hkv * groups, d)


def reference(query, key, value):
    # Layout (batch, seq, heads, head_dim). Scores rounded to the input dtype, scaled in that
    # dtype, causal mask filled with -1e9, softmax in the input dtype.
    _, seq, hq, head_dim = query.shape
    groups = hq // key.shape[2]
    k = _repeat_heads(key, groups)
    v = _repeat_heads(value, groups)
    scores = jnp.einsum("bqhd,bkhd->bhqk", query, k) * (head_dim**-0.5)
    rows = lax.broadcasted_iota(jnp.int32, (seq, seq), 0)
    cols = lax.broadcasted_iota(jnp.int32, (seq, seq), 1)
    scores = jnp.where(cols <= rows, scores, MASK_VALUE)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", probs, v)


def cost(cfg):
    b, s, d = cfg["batch"], cfg["seq_len"], cfg["head_dim"]
    hq, hkv = cfg["num_query_heads"], cfg["num_kv_heads"]
    # Causal: only the s*(s+1)/2 pairs on or below the diagonal are needed; per pair and query
    # head 2*d (q.k) + 2*d (p.v) + ~5 (scale, max, exp, sum, divide).
    pairs = b * hq * s * (s + 1) // 2
    flops = pairs * (4 * d + 5)
    nbytes = 2 * b * s * d * (2 * hq + 2 * hkv)  # q and output, k and v read once (bf16)
    return flops, nbytes


WORKLOAD = Workload(
    id="2p",
    slug="2p-gqa-attention",
    public_name="2p_GQA_Attention",
    title="Grouped-query attention",
    source="maxtext",
    model="Llama-3.1-405B",
    category="attention",
    description="Causal grouped-query attention as in Llama-3.1-405B: 128 query heads share 8 "
    "key/value heads (16 query heads per KV head), head dimension 128, 4096 tokens.",
    input_names=("query", "key", "value"),
    profiles={
        "full": {
            "batch": 4,
            "seq_len": 4096,
            "num_query_heads": 128,
            "num_kv_heads": 8,
            "head_dim": 128,
            "emb_dim": 16384,
        },
        "small": {
            "batch": 2,
            "seq_len": 256,
            "num_query_heads": 32,
            "num_kv_heads": 2,
            "head_dim": 128,
            "emb_dim": 4096,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    expert=True,
    notes="Layout (batch, seq, heads, head_dim) for q (Hq heads), k and v (Hkv heads) and the "
    "output. Query head h uses KV head h // (Hq / Hkv) (each KV head serves a consecutive "
    "block of query heads). Scores rounded to bf16, times head_dim**-0.5, causal mask "
    "filled with -1e9. Inputs N(0,1) bf16. emb_dim is informational (unused)."
    " Precision: the baseline rounds q.k to bf16 (spacing 0.25 for |q.k| in [32, 64)) and "
    "again after scaling; a kernel that keeps float32 scores can differ by slightly more "
    "than the tolerance on a few elements of rows with few keys (near the start of "
    "the sequence): round the scores as the baseline does to match everywhere.",
    upstream=Upstream(
        file="JAXBench/benchmark/2p_GQA_Attention/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(),
)
