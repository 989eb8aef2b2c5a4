"""Packed curves, one record per budget N (last N first): a board reads the record at its
budget and must get exactly what the whole curves give at that budget."""

from __future__ import annotations

import array
import math
import random
import struct

import pytest

from jaxbench.metrics.curves import (
    CURVE_KEYS,
    HEADER,
    RECORD,
    ROWS,
    pack_curves,
    point_of,
    record_start,
    set_values,
    unpack_curves,
    unpack_point,
)


def _curves(rng: random.Random, length: int) -> dict[str, list[float]]:
    return {k: [rng.uniform(-2, 5) for _ in range(length)] for k in CURVE_KEYS}


def test_pack_unpack_round_trip_and_layout():
    rng = random.Random(3)
    for length in (0, 1, 2, 7, 144):
        c = _curves(rng, length)
        blob = pack_curves(c)
        assert len(blob) == HEADER + RECORD * length
        assert struct.unpack_from("<I", blob)[0] == length | ROWS
        assert {k: list(v) for k, v in unpack_curves(blob).items()} == c
        if length:  # the first record is the last budget's
            first = array.array("d", blob[HEADER : HEADER + RECORD])
            assert list(first) == [c[k][-1] for k in CURVE_KEYS]
    assert unpack_curves(pack_curves(None)) == {k: array.array("d") for k in CURVE_KEYS}


@pytest.mark.parametrize("length", [0, 1, 3, 144])
def test_the_record_at_a_budget_gives_the_set_values_of_the_whole_curves(length):
    rng = random.Random(length)
    c = _curves(rng, length)
    blob = pack_curves(c)
    for n in (None, 0, 1, 2, length - 1, length, length + 5):
        if n is not None and n < 0:
            continue
        want = set_values(c, 50, n)
        got = set_values(unpack_point(point_of(blob, n)), 50)
        for k, v in want.items():
            assert got[k] == pytest.approx(v, nan_ok=True), (n, k)
        start = record_start(len(blob), n)
        assert point_of(blob, n) == (b"" if n == 0 else blob[start : start + RECORD])


def test_curves_packed_in_the_earlier_layout_still_read():
    """One array per key, N ascending (what migration leaderboard 0005 repacks)."""
    rng = random.Random(9)
    c = _curves(rng, 5)
    old = struct.pack("<I", 5) + array.array("d", [v for k in CURVE_KEYS for v in c[k]]).tobytes()
    assert {k: list(v) for k, v in unpack_curves(old).items()} == c
    assert point_of(old, 3) == point_of(pack_curves(c), 3)
    # no record (no curve, or budget 0): the values of empty curves
    assert set_values(unpack_point(b""), 4) == set_values(unpack_curves(b""), 4)
    assert not math.isnan(set_values(unpack_point(""), 4)["geomean"])  # SQLite's empty slice is ''
