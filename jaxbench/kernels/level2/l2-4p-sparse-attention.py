# Level 2's 4p baseline as a candidate: JAX's splash MHA over a causal mask per query head,
# vmapped over the batch with each KV head repeated for its query heads, blocks 2048 / 2048 /
# 1024 clamped to the sequence.
import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as masks


def workload(q, k, v):
    _, hq, seq, _ = q.shape
    groups = hq // k.shape[1]
    mask = masks.MultiHeadMask([masks.CausalMask(shape=(seq, seq))] * hq)
    blocks = splash.BlockSizes(block_q=min(2048, seq), block_kv=min(2048, seq), block_kv_compute=min(1024, seq))
    kernel = splash.make_splash_mha(mask, block_sizes=blocks, head_shards=1, q_seq_shards=1)

    @jax.vmap
    def attend(q_b, k_b, v_b):
        return kernel(q_b, jnp.repeat(k_b, groups, axis=0), jnp.repeat(v_b, groups, axis=0))

    return attend(q, k, v)
