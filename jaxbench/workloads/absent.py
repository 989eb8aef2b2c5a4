"""The public suite's later-level tasks that are not here yet, each with why: the workloads
list shows them under the level's tab, so that a visitor sees the level's whole public task list
and what this portal measures of it (DESIGN.md, "Levels"). Django-free and JAX-free.

A task leaves this list when its workload is registered (a test holds the two apart and, with
them, the public level's task count)."""

from __future__ import annotations

import dataclasses

_NO_COPY = "this repository imports kernels from its pinned packages and copies none"
# the reason most share: the public file vendors its baseline kernel
_OUTSIDE = f"its baseline is a Pallas kernel from outside JAX and Tokamax, which the public file vendors; {_NO_COPY}"


@dataclasses.dataclass(frozen=True)
class Absent:
    """A public task of a later level that is not registered: its folder name and why not."""

    public_name: str
    reason: str


ABSENT: dict[int, tuple[Absent, ...]] = {
    2: (
        Absent(
            "3p_MLA_Attention",
            f"its baseline is tpu-inference's MLA ragged paged attention kernel, outside JAX and Tokamax; {_NO_COPY}",
        ),
        Absent("51p_DeepSeek_V4_CSA", _OUTSIDE),
        Absent("52p_DeepSeek_V4_HCA", _OUTSIDE),
        Absent("53p_DeepSeek_V4_MLA_SWA", _OUTSIDE),
        Absent("54p_DeepSeek_V4_Masked_Dense_MLA", _OUTSIDE),
        Absent("55p_DeepSeek_V4_StreamIndex_TopK", _OUTSIDE),
        Absent("56p_DeepSeek_V4_MHC", _OUTSIDE),
        Absent(
            "57p_SparseCore_Ragged_Gather",
            "a SparseCore kernel: it needs a TPU with SparseCores (a TPU v5e has none, and on such a chip the "
            "public file falls back to XLA's gather), and its kernel is from outside JAX and Tokamax",
        ),
        Absent("58p_DeepSeek_V4_KV_Compressor", _OUTSIDE),
        Absent("59p_Megablox_GMM_v2", _OUTSIDE),
        Absent("60p_RPAv3", _OUTSIDE),
        Absent("61p_Batched_RPA", _OUTSIDE),
        Absent("62p_Causal_Conv1d_GDN", _OUTSIDE),
        Absent("63p_GDN", _OUTSIDE),
    ),
}


def of_level(level: int) -> tuple[Absent, ...]:
    """The public tasks of ``level`` not registered here, in the public suite's order."""
    return ABSENT.get(level, ())
