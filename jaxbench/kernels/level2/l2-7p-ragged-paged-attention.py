# Level 2's 7p baseline as a candidate: JAX's Pallas TPU ragged paged attention, 1/sqrt(d),
# 64 KV pages and 64 queries per block (clamped), a 32 MiB VMEM limit. TPU only.
import math

from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention


def workload(queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
    tokens, _, head_dim = queries.shape
    return ragged_paged_attention(
        queries,
        kv_pages,
        kv_lens,
        page_indices,
        cu_q_lens,
        num_seqs,
        sm_scale=1.0 / math.sqrt(head_dim),
        num_kv_pages_per_block=min(64, page_indices.shape[1]),
        num_queries_per_block=min(64, tokens),
        vmem_limit_bytes=32 * 1024 * 1024,
    )
