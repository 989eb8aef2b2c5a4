"""fast_p@N for any p from one packed blob per summary: pure functions (no Django, stdlib only).

fast_p@N for p != 1 is not folded into the stored curves (they hold p = 1): it needs, per
workload, the lows of its correct samples (independent mode: how many are above p) or the
record progression of the lows (sequential mode: the first sample whose running best low
exceeds p). ``pack`` writes those of every workload of a summary into one blob, column by
column, so that a board reads one row per summary (not one JSON aggregate per workload, 10,000
of them on a 200-submission board) and ``fast_p`` answers from it with a bisection per workload,
the same values as ``metrics.fast_p`` over the whole aggregates.

Layout (little-endian): uint32 m (the number of workloads); five int32 columns of m values
(workload pk, n_samples, n_correct, max_index or -1, offset of the workload's values); one
int32 total; the lows (float64, each workload's sorted ascending: the independent mode's
``correct_lows``, the sequential mode's ``low_progression`` lows); the sequential mode's
progression indices (float64, beside the lows; none in the independent mode).
"""

from __future__ import annotations

import array
import bisect
import math
import struct
import sys
from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple

from .aggregate import DEFAULT_P, INDEPENDENT, WorkloadAggregate, _check_mode, _check_n
from .per_workload import pass_at_k

_COLUMNS = 5  # workload pk, n_samples, n_correct, max_index, offset


class Packed(NamedTuple):
    """An unpacked blob: one entry per workload (``pks[i]``...), its values at
    ``lows[offsets[i]:offsets[i + 1]]`` (and ``indices`` alike, sequential mode)."""

    pks: array.array[int]
    n_samples: array.array[int]
    n_correct: array.array[int]
    max_index: array.array[int]
    offsets: array.array[int]
    lows: array.array[float]
    indices: array.array[float]


def _ints(values: Iterable[int]) -> array.array[int]:
    out = array.array("i", values)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def pack(aggregates: Mapping[int, WorkloadAggregate], mode: str) -> bytes:
    """{workload pk: its aggregate} of one summary (mode: the summary's) -> bytes."""
    independent = _check_mode(mode) == INDEPENDENT
    items = sorted(aggregates.items())
    lows = array.array("d")
    indices = array.array("d")
    offsets = []
    for _, agg in items:
        offsets.append(len(lows))
        if independent:
            lows.extend(agg.correct_lows)
        else:
            for i, low in agg.low_progression:
                indices.append(i)
                lows.append(low)
    cols = [
        [pk for pk, _ in items],
        [a.n_samples for _, a in items],
        [a.n_correct for _, a in items],
        [-1 if a.max_index is None else a.max_index for _, a in items],
        offsets,
    ]
    if sys.byteorder != "little":
        lows.byteswap()
        indices.byteswap()
    return b"".join(
        [
            struct.pack("<I", len(items)),
            *(_ints(c).tobytes() for c in cols),
            struct.pack("<i", len(lows)),
            lows.tobytes(),
            indices.tobytes(),
        ]
    )


def unpack(blob: bytes | bytearray | memoryview | None) -> Packed | None:
    """The columns of a blob; None for an empty one (nothing packed yet)."""
    data = bytes(blob or b"")
    if len(data) < 4:
        return None
    (m,) = struct.unpack_from("<I", data)
    pos = 4
    cols: list[array.array[int]] = []
    for _ in range(_COLUMNS):
        col = array.array("i")
        col.frombytes(data[pos : pos + 4 * m])
        cols.append(col)
        pos += 4 * m
    (total,) = struct.unpack_from("<i", data, pos)
    pos += 4
    lows = array.array("d")
    lows.frombytes(data[pos : pos + 8 * total])
    indices = array.array("d")
    indices.frombytes(data[pos + 8 * total :])
    if sys.byteorder != "little":
        for c in cols:
            c.byteswap()
        lows.byteswap()
        indices.byteswap()
    pks, n_samples, n_correct, max_index, offsets = cols
    offsets.append(total)
    return Packed(pks, n_samples, n_correct, max_index, offsets, lows, indices)


def fast_p(
    packed: Packed, workload_ids: Collection[int], n: int | None, p: float, mode: str, size: int | None = None
) -> float:
    """fast_p@n of the workloads ``workload_ids`` (``size`` of them, default their number; one
    without an entry counts 0): ``metrics.fast_p`` of their aggregates for p != 1 (for p = 1 the
    stored curves answer; here too a sample counts when its low is above p)."""
    n, independent = _check_n(n), _check_mode(mode) == INDEPENDENT
    p = float(p)
    size = len(workload_ids) if size is None else size
    if size <= 0:
        raise ValueError("an empty workload set")
    lows, offsets, indices = packed.lows, packed.offsets, packed.indices
    probs = []
    for i, pk in enumerate(packed.pks):
        if packed.n_correct[i] == 0 or pk not in workload_ids:
            continue
        lo, hi = offsets[i], offsets[i + 1]
        pos = bisect.bisect_right(lows, p, lo, hi)  # the first value above p
        if independent:
            total = packed.n_samples[i]
            probs.append(pass_at_k(total, hi - pos, total if n is None else n))
        elif pos < hi and (n is None or indices[pos] < n):
            probs.append(1.0)
    return math.fsum(probs) / size


def aggregates(packed: Packed, workload_ids: Collection[int], mode: str) -> dict[int, WorkloadAggregate]:
    """{workload pk: WorkloadAggregate} of ``workload_ids`` holding what fast_p and fast_p_curve
    read (n_samples, n_correct, max_index and the lows or their progression)."""
    independent = _check_mode(mode) == INDEPENDENT
    out = {}
    for i, pk in enumerate(packed.pks):
        if pk not in workload_ids:
            continue
        lo, hi = packed.offsets[i], packed.offsets[i + 1]
        lows = tuple(packed.lows[lo:hi])
        out[pk] = WorkloadAggregate(
            n_samples=packed.n_samples[i],
            n_correct=packed.n_correct[i],
            max_index=None if packed.max_index[i] < 0 else packed.max_index[i],
            correct_lows=lows if independent else (),
            low_progression=() if independent else tuple(zip(map(int, packed.indices[lo:hi]), lows)),
        )
    return out


def with_workload(
    blob: bytes | bytearray | memoryview | None, workload_pk: int, agg: WorkloadAggregate, mode: str
) -> bytes:
    """``blob`` with the entry of ``workload_pk`` set to ``agg``'s (one evaluation folded in)."""
    packed = unpack(blob)
    entries = aggregates(packed, set(packed.pks), mode) if packed is not None else {}
    entries[workload_pk] = agg
    return pack(entries, mode)


__all__ = ["DEFAULT_P", "Packed", "aggregates", "fast_p", "pack", "unpack", "with_workload"]
