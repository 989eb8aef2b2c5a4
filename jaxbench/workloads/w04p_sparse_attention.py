"""4p Sparse (splash) attention: causal GQA at Llama-3.1-70B shapes, the XLA baseline of the
splash-attention kernel (MaxText kernels/attention)."""

import jax
import jax.numpy as jnp
from jax import lax

from .base import Workload
from .upstream import Deviation, Upstream

MASK_VALUE = -1e30


def create_inputs(cfg, key):
    kq, kk, kv = jax.random.split(key, 3)
    b, s, d = cfg["batch"], cfg["seq_len"], cfg["head_dim"]
    hq, hkv = cfg["num_query_heads"], cfg["num_kv_heads"]
    # The query arrives pre-scaled by head_dim**-0.5 (the workload applies no scale), as in
    # the public suite. The public suite scales k and v by 0.02, which makes the logits ~0.02
    # and the attention uniform to within the tolerance (a causal running mean of v passes);
    # we keep k and v at N(0,1) so that the scores matter and outputs are well above 1e-2.
    q = jax.random.normal(kq, (b, hq, s, d), dtype=jnp.bfloat16) * (d**-0.5)
    k = jax.random.normal(kk, (b, hkv, s, d), dtype=jnp.bfloat16)
    v = jax.random.normal(kv, (b, hkv, s, d), dtype=jnp.bfloat16)
    return q, k, v


def reference(q, k, v):
    # Layout (batch, heads, seq, head_dim). Query head h uses KV head h // (Hq / Hkv).
    b, hq, s, d = q.shape
    hkv = k.shape[1]
    groups = hq // hkv
    k_rep = jnp.broadcast_to(k[:, :, None], (b, hkv, groups, s, d)).reshape(b, hq, s, d)
    v_rep = jnp.broadcast_to(v[:, :, None], (b, hkv, groups, s, d)).reshape(b, hq, s, d)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_rep)  # bf16, no further scaling
    rows = lax.broadcasted_iota(jnp.int32, (s, s), 0)
    cols = lax.broadcasted_iota(jnp.int32, (s, s), 1)
    scores = jnp.where(cols <= rows, scores, MASK_VALUE)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", probs, v_rep)


def cost(cfg):
    b, s, d = cfg["batch"], cfg["seq_len"], cfg["head_dim"]
    hq, hkv = cfg["num_query_heads"], cfg["num_kv_heads"]
    # Causal: only the s*(s+1)/2 pairs on or below the diagonal are needed (a splash kernel
    # skips the fully masked blocks); per pair and query head 4*d + ~4 (max, exp, sum, divide).
    pairs = b * hq * s * (s + 1) // 2
    flops = pairs * (4 * d + 4)
    nbytes = 2 * b * s * d * (2 * hq + 2 * hkv)
    return flops, nbytes


WORKLOAD = Workload(
    id="4p",
    slug="4p-sparse-attention",
    public_name="4p_Sparse_Attention",
    title="Sparse (splash) attention",
    source="maxtext",
    model="Llama-3.1-70B",
    category="attention",
    description="Causal grouped-query attention (64 query heads over 8 KV heads, 4096 tokens), "
    "the XLA baseline of the block-sparse splash-attention kernel: a kernel can skip "
    "the key blocks above the diagonal.",
    input_names=("q", "k", "v"),
    profiles={
        "full": {"batch": 4, "seq_len": 4096, "num_query_heads": 64, "num_kv_heads": 8, "head_dim": 128},
        "small": {"batch": 2, "seq_len": 256, "num_query_heads": 16, "num_kv_heads": 2, "head_dim": 128},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    expert=True,
    notes="Layout (batch, heads, seq, head_dim); q has Hq heads, k and v Hkv heads, query head h "
    "uses KV head h // (Hq / Hkv). q is already scaled by head_dim**-0.5 in the inputs: "
    "the workload applies NO softmax scale. Scores rounded to bf16, causal mask filled "
    "with -1e30. Inputs differ from the public suite's (k, v there are x 0.02, which "
    "makes attention uniform within the tolerance): here q ~ N(0,1)/sqrt(d), "
    "k, v ~ N(0,1).",
    upstream=Upstream(
        file="JAXBench/benchmark/4p_Sparse_Attention/baseline.py",
        commit="5d39d1a27ed35b64ab0d08673e6de9153322a8e0",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "inputs",
            "k and v ~ N(0, 1) (public: N(0, 1) x 0.02); q is pre-scaled by head_dim**-0.5 as in the public file.",
            "With k and v x 0.02 the logits are ~0.02 and the attention is uniform to within the "
            "tolerance: a causal running mean of v passes.",
        ),
    ),
)
