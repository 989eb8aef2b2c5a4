# Level 2's 1p baseline as a candidate: JAX's Pallas TPU flash attention, causal, scaled by
# 1/sqrt(head_dim), forward blocks 2048 / 2048 / 1024 clamped to the sequence.
import math

from jax.experimental.pallas.ops.tpu.flash_attention import BlockSizes, flash_attention


def workload(query, key, value):
    seq, head_dim = query.shape[2], query.shape[3]
    blocks = BlockSizes(
        block_q=min(2048, seq),
        block_k_major=min(2048, seq),
        block_k=min(1024, seq),
        block_b=1,
        block_q_major_dkv=128,
        block_k_major_dkv=128,
        block_k_dkv=128,
        block_q_dkv=128,
        block_k_major_dq=128,
        block_k_dq=128,
        block_q_dq=128,
    )
    return flash_attention(query, key, value, causal=True, sm_scale=1.0 / math.sqrt(head_dim), block_sizes=blocks)
