# JAXBench expert candidate: 8p GEMM on JAX's own Pallas TPU matmul kernel.
#
# Implementation: jax.experimental.pallas.ops.tpu.matmul.matmul (the kernel the public suite's
# optimized 8p file uses; Tokamax has no dense-matmul op - its ragged_dot is for grouped
# matmuls). A 3-D grid (M/bm, N/bn, K/bk) with the K axis innermost, an f32 VMEM accumulator
# per (bm, bn) output tile and a bf16 output. The kernel computes grid sizes with floor
# division, so a block that does not divide its dimension would silently drop the remainder:
# the candidate checks divisibility and raises instead. Block sizes are clamped to the matrix
# dimensions, so the default also runs at the small profile.
from jax.experimental.pallas.ops.tpu.matmul import matmul

IMPLEMENTATION = "jax.experimental.pallas.ops.tpu.matmul.matmul"

CONFIG = {}

# The public optimized file's tuned values: block_shape (1024, 2048), block_k 1024.
EXPERT_CONFIG = {
    "block_m": 1024,
    "block_n": 2048,
    "block_k": 1024,
}

# Full profile (M = K = 8192, N = 28672): block_m 256..2048 x block_n 1024..4096 (3584 =
# 28672 / 8) x block_k 512..4096, all dividing their dimension, keeping the points whose
# VMEM need (double-buffered bf16 A, B and C tiles plus the f32 accumulator) fits in 28 MiB
# of the 32 MiB default scoped VMEM of a v6e (the kernel sets no VMEM limit).
SWEEP = [
    {"block_m": 256, "block_n": 1024, "block_k": 512},
    {"block_m": 256, "block_n": 1024, "block_k": 1024},
    {"block_m": 256, "block_n": 1024, "block_k": 2048},
    {"block_m": 256, "block_n": 1024, "block_k": 4096},
    {"block_m": 256, "block_n": 2048, "block_k": 512},
    {"block_m": 256, "block_n": 2048, "block_k": 1024},
    {"block_m": 256, "block_n": 2048, "block_k": 2048},
    {"block_m": 256, "block_n": 3584, "block_k": 512},
    {"block_m": 256, "block_n": 3584, "block_k": 1024},
    {"block_m": 256, "block_n": 4096, "block_k": 512},
    {"block_m": 256, "block_n": 4096, "block_k": 1024},
    {"block_m": 512, "block_n": 1024, "block_k": 512},
    {"block_m": 512, "block_n": 1024, "block_k": 1024},
    {"block_m": 512, "block_n": 1024, "block_k": 2048},
    {"block_m": 512, "block_n": 1024, "block_k": 4096},
    {"block_m": 512, "block_n": 2048, "block_k": 512},
    {"block_m": 512, "block_n": 2048, "block_k": 1024},
    {"block_m": 512, "block_n": 2048, "block_k": 2048},
    {"block_m": 512, "block_n": 3584, "block_k": 512},
    {"block_m": 512, "block_n": 4096, "block_k": 512},
    {"block_m": 1024, "block_n": 1024, "block_k": 512},
    {"block_m": 1024, "block_n": 1024, "block_k": 1024},
    {"block_m": 1024, "block_n": 1024, "block_k": 2048},
    {"block_m": 1024, "block_n": 2048, "block_k": 512},
    {"block_m": 1024, "block_n": 2048, "block_k": 1024},
    {"block_m": 2048, "block_n": 1024, "block_k": 512},
    {"block_m": 2048, "block_n": 1024, "block_k": 1024},
]

# Small profile (M = K = 512, N = 1792).
SWEEP_SMALL = [
    {"block_m": 128, "block_n": 256, "block_k": 128},
    {"block_m": 256, "block_n": 896, "block_k": 256},
    {"block_m": 512, "block_n": 1792, "block_k": 512},
]

_DEFAULT_CONFIG = dict(EXPERT_CONFIG)


def workload(a, b):
    cfg = {**_DEFAULT_CONFIG, **EXPERT_CONFIG}
    m, k = a.shape
    n = b.shape[1]
    bm = min(int(cfg["block_m"]), m)
    bn = min(int(cfg["block_n"]), n)
    bk = min(int(cfg["block_k"]), k)
    if m % bm or n % bn or k % bk:
        raise ValueError(f"blocks ({bm}, {bn}, {bk}) must divide (M, N, K) = ({m}, {n}, {k})")
    return matmul(a, b, block_shape=(bm, bn), block_k=bk, out_dtype=a.dtype)
