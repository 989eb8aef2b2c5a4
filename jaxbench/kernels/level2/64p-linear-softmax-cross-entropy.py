# Level 2's 64p baseline as a candidate: Tokamax's linear softmax cross-entropy forward kernel
# (the pinned Tokamax), mean reduction, blocks 1024 x 512 clamped to the tokens and hidden size,
# and the largest vocabulary block (a multiple of 128 up to 512) that divides the vocabulary.
from tokamax._src.ops.linear_softmax_cross_entropy_loss import pallas_mosaic_tpu_kernel as lce


def workload(x, labels, w):
    (b, h), v = x.shape, w.shape[1]
    v_block = next(blk for blk in range(512, 127, -128) if v % blk == 0)
    return lce.linear_softmax_cross_entropy_loss_fwd_pallas_mosaic_tpu(
        x, labels, w, b_block_size=min(1024, b), h_block_size=min(512, h), v_block_size=v_block, reduction="mean"
    )
