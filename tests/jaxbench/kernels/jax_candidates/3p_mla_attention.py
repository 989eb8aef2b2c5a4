# 3p multi-head latent attention with the attention core on JAX's
# jax.experimental.pallas.ops.tpu.flash_attention, as the public optimized 3p file does: the
# kernel needs one head dim for q, k and v, so the 192-dim q/k heads and the 128-dim v heads
# are zero-padded to 256 (zeros change neither q.k nor the kept part of p.v) and the output
# is sliced back to 128. Projections and RoPE in XLA, as in the baseline. Static sizes from
# CONFIG (the harness sets it to the profile's values).
import math

import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import flash_attention as fa

CONFIG = {}


def _rope(x, seq, theta):
    dim = x.shape[-1]
    inv_freq = 1.0 / (theta ** (jnp.arange(0, dim, 2, dtype=jnp.float32) / dim))
    ang = jnp.arange(seq, dtype=jnp.float32)[:, None] * inv_freq[None, :]
    cos = jnp.cos(ang).astype(x.dtype)[None, :, None, :]
    sin = jnp.sin(ang).astype(x.dtype)[None, :, None, :]
    lo, hi = x[..., : dim // 2], x[..., dim // 2:]
    return jnp.concatenate([lo * cos - hi * sin, hi * cos + lo * sin], axis=-1)


def workload(x, q_down, q_up, kv_down, k_up, v_up, o_proj):
    h, nope, rope = CONFIG["num_heads"], CONFIG["qk_nope_head_dim"], CONFIG["qk_rope_head_dim"]
    vd, kvl, theta = CONFIG["v_head_dim"], CONFIG["kv_lora_rank"], CONFIG["rope_theta"]
    b, s, _ = x.shape
    q = ((x @ q_down) @ q_up).reshape(b, s, h, nope + rope)
    kv = x @ kv_down
    k_nope = (kv[..., :kvl] @ k_up).reshape(b, s, h, nope)
    v = (kv[..., :kvl] @ v_up).reshape(b, s, h, vd)
    k_rot = jnp.broadcast_to(_rope(kv[:, :, None, kvl:], s, theta), (b, s, h, rope))
    q_full = jnp.concatenate([q[..., :nope], _rope(q[..., nope:], s, theta)], axis=-1)
    k_full = jnp.concatenate([k_nope, k_rot], axis=-1)
    pad = 256

    def heads_first(t):                            # (B, S, H, D) -> (B, H, S, 256)
        t = jnp.pad(t, ((0, 0), (0, 0), (0, 0), (0, pad - t.shape[-1])))
        return jnp.swapaxes(t, 1, 2)

    blocks = fa.BlockSizes(block_q=min(2048, s), block_k_major=min(2048, s),
                           block_k=min(1024, s), block_b=1)
    out = fa.flash_attention(heads_first(q_full), heads_first(k_full), heads_first(v),
                             causal=True, sm_scale=1.0 / math.sqrt(nope + rope),
                             block_sizes=blocks)[..., :vd]
    return jnp.swapaxes(out, 1, 2).reshape(b, s, h * vd) @ o_proj
