# JAXBench expert candidate: 2p causal grouped-query attention through Tokamax's Mosaic TPU
# flash attention.
#
# Implementation: tokamax.dot_product_attention with the Mosaic TPU backend
# (tokamax._src.ops.attention.pallas_mosaic_tpu.PallasMosaicTpuFlashAttention, which runs
# Tokamax's splash-attention Pallas kernel with a static causal mask, so key blocks above the
# diagonal are skipped). GQA is native: query head n reads KV head n // (Hq / Hkv), the
# workload's mapping, so K and V are never repeated. The op is called with an explicit Config
# built from EXPERT_CONFIG (no autotuning, no heuristic), so every SWEEP point is an ordinary
# candidate file (evaluator.bench.experts.configured_source).
#
# Layout: the workload is (batch, seq, heads, dim), Tokamax's own order. Batch is folded into
# the head axis ((B, H) -> B*H heads; with Hq = G*Hkv the folded query head b*Hq + h still
# maps to the folded KV head b*Hkv + h // G), so the kernel runs as one un-vmapped
# pallas_call: the (B, S) -> (S, B) swap here and Tokamax's own seq/head swap compose into
# the single transpose Tokamax would do anyway. (Tokamax vmaps the kernel over leading batch
# axes; in jax 0.10.2 a vmapped pallas_call with dimension_semantics fails under TPU
# interpret mode - a safe_zip length error in the interpreter's grid randomisation - while a
# size-1 vmap is squeezed away.) The softmax scale is folded into q (logits_scale=1).
# CPU: Tokamax refuses non-TPU devices in `supported_on` (that check looks at the default
# device). The kernel itself runs under TPU interpret mode and lowers for TPU from a CPU host,
# so off-TPU (only) the check is skipped; on a TPU the op's own check applies.
import math

import jax.numpy as jnp
import tokamax
from tokamax._src import config as _tk_config
from tokamax._src.ops.attention import pallas_mosaic_tpu as _tk_attn
from tokamax._src.ops.experimental.tpu.splash_attention import (
    splash_attention_kernel as _tk_splash,
)

IMPLEMENTATION = ("tokamax.dot_product_attention[mosaic] "
                  "(PallasMosaicTpuFlashAttention, Tokamax splash kernel, causal mask, "
                  "native GQA)")

# Tokamax reads its options (e.g. tokamax_autotuning_cache_miss_fallback) through absl flags
# and, the first time one is read, parses sys.argv with absl - even when the op has an explicit
# config. In a host process whose argv carries its own flags (pytest, the harness's sandboxed
# child) that raises UnrecognizedFlagError, so mark the flags parsed: every option keeps its
# default.
if not _tk_config.flags.FLAGS.is_parsed():
    _tk_config.flags.FLAGS.mark_as_parsed()

CONFIG = {}

# The public suite's tuned blocks (block_q 2048, block_kv 2048, block_kv_compute 1024),
# clamped to the sequence length so that the default also runs at small shapes. Layouts are
# "HEAD_DIM_MINOR" or "SEQ_MINOR". use_base2_exp is off: exp2 with q pre-multiplied by
# log2(e) rounds q to bf16 a second time, which at the small profile is enough to cross the
# tolerance against the baseline's own bf16 noise on a few elements.
EXPERT_CONFIG = {
    "block_q": 2048,
    "block_kv": 2048,
    "block_kv_compute": 1024,
    "q_layout": "HEAD_DIM_MINOR",
    "k_layout": "HEAD_DIM_MINOR",
    "v_layout": "HEAD_DIM_MINOR",
    "use_experimental_scheduler": False,
    "use_base2_exp": False,
}

# Full profile (seq 4096, head dim 128): Tokamax's own autotuning space for seq >= 1024
# (block_q, block_kv in 1024..4096, block_kv_compute <= 1024 dividing block_kv; head-dim-minor
# layouts), keeping the points whose estimated VMEM need (double-buffered q/k/v/out blocks,
# f32 m/l/acc scratch, two f32 (block_q, block_kv_compute) logit tiles) fits in 28 MiB of
# the 32 MiB default scoped VMEM of a v6e (the kernel sets no VMEM limit).
SWEEP = [
    {"block_q": 1024, "block_kv": 1024, "block_kv_compute": 256},
    {"block_q": 1024, "block_kv": 1024, "block_kv_compute": 512},
    {"block_q": 1024, "block_kv": 1024, "block_kv_compute": 1024},
    {"block_q": 1024, "block_kv": 2048, "block_kv_compute": 256},
    {"block_q": 1024, "block_kv": 2048, "block_kv_compute": 512},
    {"block_q": 1024, "block_kv": 2048, "block_kv_compute": 1024},
    {"block_q": 1024, "block_kv": 4096, "block_kv_compute": 256},
    {"block_q": 1024, "block_kv": 4096, "block_kv_compute": 512},
    {"block_q": 1024, "block_kv": 4096, "block_kv_compute": 1024},
    {"block_q": 2048, "block_kv": 1024, "block_kv_compute": 256},
    {"block_q": 2048, "block_kv": 1024, "block_kv_compute": 512},
    {"block_q": 2048, "block_kv": 1024, "block_kv_compute": 1024},
    {"block_q": 2048, "block_kv": 2048, "block_kv_compute": 256},
    {"block_q": 2048, "block_kv": 2048, "block_kv_compute": 512},
    {"block_q": 2048, "block_kv": 2048, "block_kv_compute": 1024},
    {"block_q": 2048, "block_kv": 4096, "block_kv_compute": 256},
    {"block_q": 2048, "block_kv": 4096, "block_kv_compute": 512},
    {"block_q": 2048, "block_kv": 4096, "block_kv_compute": 1024},
    {"block_q": 4096, "block_kv": 1024, "block_kv_compute": 256},
    {"block_q": 4096, "block_kv": 1024, "block_kv_compute": 512},
    {"block_q": 4096, "block_kv": 2048, "block_kv_compute": 256},
    {"block_q": 4096, "block_kv": 2048, "block_kv_compute": 512},
    {"block_q": 4096, "block_kv": 4096, "block_kv_compute": 256},
]

# Small profile (seq 256): distinct points that need no clamping.
SWEEP_SMALL = [
    {"block_q": 128, "block_kv": 128, "block_kv_compute": 128},
    {"block_q": 256, "block_kv": 256, "block_kv_compute": 128},
    {"block_q": 256, "block_kv": 256, "block_kv_compute": 256},
]

_DEFAULT_CONFIG = dict(EXPERT_CONFIG)


class _MosaicTpuAttention(_tk_attn.PallasMosaicTpuFlashAttention):
    def supported_on(self, device):
        if device.platform != "tpu":
            return True   # interpret mode / cross-lowering from a CPU host: see the header
        return super().supported_on(device)


def _op(seq_q, seq_kv):
    cfg = {**_DEFAULT_CONFIG, **EXPERT_CONFIG}
    block_q = min(int(cfg["block_q"]), seq_q)
    block_kv = min(int(cfg["block_kv"]), seq_kv)
    block_kv_compute = min(int(cfg["block_kv_compute"]), block_kv)
    layout = _tk_splash.QKVLayout
    config = _tk_attn.Config(
        block_q=block_q,
        block_kv=block_kv,
        block_kv_compute=block_kv_compute,
        q_layout=layout[cfg["q_layout"]],
        k_layout=layout[cfg["k_layout"]],
        v_layout=layout[cfg["v_layout"]],
        use_experimental_scheduler=bool(cfg["use_experimental_scheduler"]),
        use_base2_exp=bool(cfg["use_base2_exp"]),
    )
    return _MosaicTpuAttention(config=config)


def workload(query, key, value):
    b, seq, hq, dim = query.shape
    scale = 1.0 / math.sqrt(dim)
    q = (query.astype(jnp.float32) * scale).astype(query.dtype)

    # (B, S, H, D) -> (S, B*H, D): batch folded into heads.
    def fold(x):
        return jnp.swapaxes(x, 0, 1).reshape(seq, b * x.shape[2], dim)

    out = tokamax.dot_product_attention(
        fold(q), fold(key), fold(value),
        scale=1.0, is_causal=True, implementation=_op(seq, key.shape[1]))
    return jnp.swapaxes(out.reshape(seq, b, hq, dim), 0, 1)
