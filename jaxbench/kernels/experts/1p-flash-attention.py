# JAXBench expert candidate: 1p causal MHA through Tokamax's Mosaic TPU flash attention.
#
# Implementation: tokamax.dot_product_attention with the Mosaic TPU backend
# (tokamax._src.ops.attention.pallas_mosaic_tpu.PallasMosaicTpuFlashAttention, which runs
# Tokamax's splash-attention Pallas kernel with a static causal mask, so key blocks above the
# diagonal are skipped). The op is called with an explicit Config built from EXPERT_CONFIG, so
# no autotuning or heuristic is involved and every SWEEP point is an ordinary candidate file
# (jaxbench.kernels.experts.configured_source).
#
# Layout: the workload is (batch, heads, seq, dim); Tokamax takes (..., seq, heads, dim) and
# itself swaps to head-major for the kernel, so the two transposes around the call cancel in
# XLA. The softmax scale is folded into q beforehand (logits_scale=1), so nothing sits between
# the transposes. Batch is folded into the head axis ((B, H) -> B*H heads, all with the same
# causal mask): the kernel then runs one un-vmapped pallas_call. (Tokamax vmaps the kernel
# over leading batch axes; in jax 0.10.2 a vmapped pallas_call with dimension_semantics fails
# under TPU interpret mode - a safe_zip length error in the interpreter's grid randomisation -
# while a size-1 vmap is squeezed away. Folding is free on TPU and avoids that.)
# CPU: see _mosaic_flash.py (Tokamax's device check is skipped off-TPU only).
import math

import jax.numpy as jnp
import tokamax

IMPLEMENTATION = ("tokamax.dot_product_attention[mosaic] "
                  "(PallasMosaicTpuFlashAttention, Tokamax splash kernel, causal mask)")

CONFIG = {}

from ._mosaic_flash import EXPERT_CONFIG, SWEEP, _op  # noqa: F401  (inlined: see _mosaic_flash.py)

# Small profile (seq 512): distinct points that need no clamping.
SWEEP_SMALL = [
    {"block_q": 128, "block_kv": 128, "block_kv_compute": 128},
    {"block_q": 256, "block_kv": 512, "block_kv_compute": 256},
    {"block_q": 512, "block_kv": 512, "block_kv_compute": 512},
]


def workload(query, key, value):
    b, h, seq, dim = query.shape
    scale = 1.0 / math.sqrt(dim)
    q = (query.astype(jnp.float32) * scale).astype(query.dtype)

    # (B, H, S, D) -> (S, B*H, D): batch folded into heads, Tokamax's (seq, heads, dim) order.
    def fold(x):
        return jnp.swapaxes(x.reshape(b * h, seq, dim), 0, 1)

    out = tokamax.dot_product_attention(
        fold(q), fold(key), fold(value),
        scale=1.0, is_causal=True, implementation=_op(seq, seq))
    return jnp.swapaxes(out, 0, 1).reshape(b, h, seq, dim)
