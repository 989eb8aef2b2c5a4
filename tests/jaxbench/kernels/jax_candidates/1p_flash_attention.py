# 1p causal MHA on jax.experimental.pallas.ops.tpu.flash_attention (the public suite's
# optimized 1p kernel), layout (batch, heads, seq, dim) as the workload's. Block sizes: the
# public tuned values (block_q 2048, block_k_major 2048, block_k 1024), clamped to seq.
import math

from jax.experimental.pallas.ops.tpu import flash_attention as fa

CONFIG = {}


def workload(query, key, value):
    _, _, seq, dim = query.shape
    blocks = fa.BlockSizes(block_q=min(2048, seq), block_k_major=min(2048, seq),
                           block_k=min(1024, seq), block_b=1)
    return fa.flash_attention(query, key, value, causal=True, sm_scale=1.0 / math.sqrt(dim),
                              block_sizes=blocks)
