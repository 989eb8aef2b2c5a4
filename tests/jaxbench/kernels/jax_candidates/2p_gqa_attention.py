# 2p causal GQA on JAX's splash attention kernel
# (jax.experimental.pallas.ops.tpu.splash_attention, native GQA: query head n reads KV head
# n // (Hq / Hkv)). Batch is folded into the head axis (the folded mapping stays correct), so
# the kernel is not vmapped; q is pre-scaled by 1/sqrt(d) in f32 (the kernel applies no
# scale). Blocks: the public tuned values (2048 / 2048 / 1024), clamped to seq.
import math

import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

CONFIG = {}


def workload(query, key, value):
    b, seq, hq, dim = query.shape
    q = (query.astype(jnp.float32) * (1.0 / math.sqrt(dim))).astype(query.dtype)

    def fold(x):                                   # (B, S, H, D) -> (B*H, S, D)
        return jnp.swapaxes(x, 1, 2).reshape(b * x.shape[2], seq, dim)

    mask = sm.MultiHeadMask([sm.CausalMask((seq, seq))] * (b * hq))
    blocks = sk.BlockSizes(block_q=min(2048, seq), block_kv=min(2048, seq),
                           block_kv_compute=min(1024, seq))
    kernel = sk.make_splash_mha(mask, head_shards=1, q_seq_shards=1, block_sizes=blocks)
    out = kernel(fold(q), fold(key), fold(value))  # (B*Hq, S, D)
    return jnp.swapaxes(out.reshape(b, hq, seq, dim), 1, 2)
