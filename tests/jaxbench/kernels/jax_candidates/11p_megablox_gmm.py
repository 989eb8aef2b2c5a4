# 11p grouped matmul on JAX's Megablox kernel (jax.experimental.pallas.ops.tpu.megablox.gmm,
# the public optimized 11p kernel): f32 accumulation, bf16 output. Tiling: the public tuned
# (256, 1024, 1024) at full size, clamped to the matrix dimensions (N 1536 is not a multiple
# of 1024: the kernel handles the irregular last tile).
from jax.experimental.pallas.ops.tpu.megablox import gmm

CONFIG = {}


def workload(lhs, rhs, group_sizes):
    m, k = lhs.shape
    n = rhs.shape[2]
    tiling = (min(256, m), min(1024, k), min(1024, n))
    return gmm(lhs, rhs, group_sizes, preferred_element_type=lhs.dtype, tiling=tiling)
