# Level 2's 6p baseline as a candidate: JAX's Pallas TPU paged attention, 128 pages per compute
# block clamped to a sequence's pages.
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention


def workload(q, k_pages, v_pages, lengths, page_indices):
    per_seq = page_indices.shape[1]
    return paged_attention(q, k_pages, v_pages, lengths, page_indices, pages_per_compute_block=min(128, per_seq))
