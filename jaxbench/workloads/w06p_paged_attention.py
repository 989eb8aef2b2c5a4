"""6p Paged attention, decode: one query token per sequence attends to its KV cache stored in
fixed-size pages (Llama-3.1-70B serving shapes, MaxText paged attention)."""

import jax
import jax.numpy as jnp

from .base import Workload
from .upstream import Deviation, Upstream

MASK_VALUE = -1e30


def create_inputs(cfg, key):
    kq, kk, kv, klen, kperm = jax.random.split(key, 5)
    n, hq, hkv, d = cfg["num_seqs"], cfg["num_query_heads"], cfg["num_kv_heads"], cfg["head_dim"]
    page, per_seq = cfg["page_size"], cfg["pages_per_seq"]
    total_pages = n * per_seq
    max_len = per_seq * page
    # The public suite fills every cache to full length with an identity page table and
    # scales k and v by 0.02, so outputs (~ the mean of v) are below the tolerance and a zero
    # output passes. Per WORKLOADS.md's policy we keep the computation and generate inputs
    # that exercise it: N(0,1) values, random lengths in [1, max_len] (most end inside a
    # page), and a random permutation of the physical pages.
    queries = jax.random.normal(kq, (n, hq, d), dtype=jnp.bfloat16)
    k_pages = jax.random.normal(kk, (total_pages, page, hkv, d), dtype=jnp.bfloat16)
    v_pages = jax.random.normal(kv, (total_pages, page, hkv, d), dtype=jnp.bfloat16)
    kv_lens = jax.random.randint(klen, (n,), 1, max_len + 1, dtype=jnp.int32)
    page_indices = jax.random.permutation(kperm, total_pages).astype(jnp.int32)
    page_indices = page_indices.reshape(n, per_seq)
    cu_q_lens = jnp.arange(n + 1, dtype=jnp.int32)
    return queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens


def reference(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens):
    n, per_seq = page_indices.shape
    _, page, hkv, d = k_pages.shape
    hq = queries.shape[1]
    groups = hq // hkv
    max_len = per_seq * page
    # Sequence i's query is token row cu_q_lens[i]; its cache is the concatenation of the
    # pages page_indices[i, 0..per_seq-1], token t = page * j + slot.
    q = queries[cu_q_lens[:-1]]  # (n, hq, d)
    k = k_pages[page_indices].reshape(n, max_len, hkv, d)
    v = v_pages[page_indices].reshape(n, max_len, hkv, d)
    k = jnp.broadcast_to(k[:, :, :, None], (n, max_len, hkv, groups, d)).reshape(n, max_len, hq, d)
    v = jnp.broadcast_to(v[:, :, :, None], (n, max_len, hkv, groups, d)).reshape(n, max_len, hq, d)
    scores = jnp.einsum("nhd,nthd->nht", q, k) * (d**-0.5)  # bf16
    valid = jnp.arange(max_len, dtype=jnp.int32)[None, :] < kv_lens[:, None]
    scores = jnp.where(valid[:, None, :], scores, MASK_VALUE)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("nht,nthd->nhd", probs, v)


def _expected_len(cfg):
    # kv_lens are uniform in [1, max_len]: the work needed is on average (max_len + 1) / 2
    # tokens per sequence (a kernel stops at each sequence's length).
    return (cfg["pages_per_seq"] * cfg["page_size"] + 1) / 2


def cost(cfg):
    n, hq, hkv, d = cfg["num_seqs"], cfg["num_query_heads"], cfg["num_kv_heads"], cfg["head_dim"]
    tokens = n * _expected_len(cfg)
    flops = tokens * hq * (4 * d + 5)
    nbytes = (
        2 * 2 * n * hq * d  # queries in, output out
        + 2 * 2 * tokens * hkv * d  # the K and V tokens actually used
        + 4 * (n * cfg["pages_per_seq"] + 2 * n + 1)
    )
    return int(flops), int(nbytes)


WORKLOAD = Workload(
    id="6p",
    slug="6p-paged-attention",
    public_name="6p_Paged_Attention",
    title="Paged attention (decode)",
    source="maxtext",
    model="Llama-3.1-70B",
    category="attention",
    description="Decode-step attention over a paged KV cache: each of 64 sequences has one query "
    "token (64 heads) and up to 4096 cached tokens stored in 16-token pages that a "
    "page table scatters over a shared pool; 8 KV heads (grouped-query).",
    input_names=("queries", "k_pages", "v_pages", "kv_lens", "page_indices", "cu_q_lens"),
    profiles={
        "full": {
            "num_seqs": 64,
            "max_seq_len": 4096,
            "num_query_heads": 64,
            "num_kv_heads": 8,
            "head_dim": 128,
            "page_size": 16,
            "pages_per_seq": 256,
        },
        "small": {
            "num_seqs": 8,
            "max_seq_len": 128,
            "num_query_heads": 64,
            "num_kv_heads": 8,
            "head_dim": 128,
            "page_size": 16,
            "pages_per_seq": 8,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    expert=True,
    notes="queries (num_seqs, Hq, d): sequence i's query is row cu_q_lens[i] (cu_q_lens = "
    "0..num_seqs). k_pages, v_pages (total_pages, page_size, Hkv, d), token-major pages "
    "(the public optimized kernel uses head-major pages: transpose inside the kernel). "
    "Sequence i's cache is pages page_indices[i, :] in order; tokens t >= kv_lens[i] are "
    "masked with -1e30 (a length mask, no causal mask: the query is the last token). "
    "Query head h uses KV head h // (Hq / Hkv). Scores rounded to bf16, times "
    "head_dim**-0.5. Our inputs (unlike the public suite's degenerate ones) have random "
    "lengths in [1, max_seq_len], a shuffled page table and N(0,1) values.",
    upstream=Upstream(
        file="JAXBench/benchmark/6p_Paged_Attention/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "inputs",
            "Random kv_lens in [1, max_seq_len], a shuffled page table, k and v ~ N(0, 1) "
            "(public: every cache full, an identity page table, k and v x 0.02).",
            "With the public inputs the outputs (about the mean of v) are below the tolerance and "
            "a zero output passes; the computation is kept and the inputs exercise it "
            '(WORKLOADS.md, "Degenerate cases in the public suite: the policy").',
        ),
    ),
)
