# JAXBench expert candidate: 11p Megablox grouped matmul through Tokamax's Mosaic TPU ragged
# dot.
#
# Implementation: tokamax.ragged_dot with the Mosaic TPU backend
# (tokamax._src.ops.ragged_dot.pallas_mosaic_tpu.PallasMosaicTpuRaggedDot: Tokamax's
# Megablox GMM Pallas kernel). Group metadata built from group_sizes maps every (tile_m)-row
# tile of lhs to the groups it overlaps, so ragged group boundaries that are not
# tile-aligned are handled by masked stores; f32 accumulation over tile_k, bf16 output. The op
# is called with an explicit Config built from EXPERT_CONFIG (no autotuning, no lookup
# table), so every SWEEP point is an ordinary candidate file.
# Semantics: the baseline multiplies, for each group, a window of max_expert_size rows at the
# group's offset and zeroes the rows past the group's size; since every group size is at most
# max_expert_size and the sizes sum to M, that is exactly ragged_dot(lhs, rhs, group_sizes)
# (max_expert_size, the static CONFIG value, is not needed by the kernel).
# CPU: Tokamax refuses non-TPU devices in `supported_on` (that check looks at the default
# device). The kernel itself runs under TPU interpret mode and lowers for TPU from a CPU host,
# so off-TPU (only) the check is skipped; on a TPU the op's own check applies.
import tokamax
from tokamax._src import config as _tk_config
from tokamax._src.ops.ragged_dot import pallas_mosaic_tpu as _tk_gmm

IMPLEMENTATION = "tokamax.ragged_dot[mosaic] (PallasMosaicTpuRaggedDot, Megablox GMM kernel)"

# Tokamax reads its options (e.g. tokamax_autotuning_cache_miss_fallback) through absl flags
# and, the first time one is read, parses sys.argv with absl - even when the op has an explicit
# config. In a host process whose argv carries its own flags (pytest, the harness's sandboxed
# child) that raises UnrecognizedFlagError, so mark the flags parsed: every option keeps its
# default.
if not _tk_config.flags.FLAGS.is_parsed():
    _tk_config.flags.FLAGS.mark_as_parsed()

CONFIG = {}

# Tile sizes are clamped to the matrix dimensions, so the default also runs at small shapes.
EXPERT_CONFIG = {
    "tile_m": 256,
    "tile_k": 2048,
    "tile_n": 1536,
    "input_buffer_count": 2,
}

# Full profile (M 32768, K 4096, N 1536, 128 groups): tile_m 128..512 x tile_k 1024..4096 x
# tile_n 512 / 768 / 1536 x 2 or 3 lhs buffers (Tokamax's tuned table has (256, 4096, 1536)
# for this K, N), keeping the points whose VMEM need (buffered lhs tiles, double-buffered
# rhs and out tiles, f32 accumulator) fits in 28 MiB of the 32 MiB default scoped VMEM of a
# v6e (the kernel sets no VMEM limit).
SWEEP = [
    {"tile_m": 128, "tile_k": 1024, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 1024, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 1024, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 1024, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 1024, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 1024, "tile_n": 1536, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 2048, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 2048, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 2048, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 2048, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 2048, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 2048, "tile_n": 1536, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 4096, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 4096, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 4096, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 128, "tile_k": 4096, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 128, "tile_k": 4096, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 1024, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 1024, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 1024, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 1024, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 1024, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 1024, "tile_n": 1536, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 2048, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 2048, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 2048, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 2048, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 2048, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 2048, "tile_n": 1536, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 4096, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 4096, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 256, "tile_k": 4096, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 4096, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 1024, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 1024, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 1024, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 1024, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 1024, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 1024, "tile_n": 1536, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 2048, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 2048, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 2048, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 2048, "tile_n": 768, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 2048, "tile_n": 1536, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 2048, "tile_n": 1536, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 4096, "tile_n": 512, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 4096, "tile_n": 512, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 4096, "tile_n": 768, "input_buffer_count": 2},
    {"tile_m": 512, "tile_k": 4096, "tile_n": 768, "input_buffer_count": 3},
]

# Small profile (M 2048, K 512, N 256).
SWEEP_SMALL = [
    {"tile_m": 128, "tile_k": 512, "tile_n": 256, "input_buffer_count": 2},
    {"tile_m": 256, "tile_k": 256, "tile_n": 128, "input_buffer_count": 3},
    {"tile_m": 512, "tile_k": 512, "tile_n": 256, "input_buffer_count": 2},
]

_DEFAULT_CONFIG = dict(EXPERT_CONFIG)


class _MosaicTpuRaggedDot(_tk_gmm.PallasMosaicTpuRaggedDot):
    def supported_on(self, device):
        if device.platform != "tpu":
            return True   # interpret mode / cross-lowering from a CPU host: see the header
        return super().supported_on(device)


def workload(lhs, rhs, group_sizes):
    cfg = {**_DEFAULT_CONFIG, **EXPERT_CONFIG}
    m, k = lhs.shape
    n = rhs.shape[2]
    config = _tk_gmm.Config(
        tile_m=min(int(cfg["tile_m"]), m),
        tile_k=min(int(cfg["tile_k"]), k),
        tile_n=min(int(cfg["tile_n"]), n),
        input_buffer_count=int(cfg["input_buffer_count"]),
    )
    return tokamax.ragged_dot(
        lhs, rhs, group_sizes,
        preferred_element_type=lhs.dtype,
        implementation=_MosaicTpuRaggedDot(config=config),
    )
