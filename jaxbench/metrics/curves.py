"""The leaderboard's curves and per-workload folding: pure functions over samples (no Django).

Curves. For every workload w and budget N = 1..L_w the aggregate gives w's contribution to the
set metrics: ``log`` = E[ln s_w(N)], ``lo``/``hi`` = ln of the floored ends of the speedup interval
of the sample that defines s_w(N), ``solved`` = P(solved within N), ``fast`` = P(fast within N)
(p = 1); ``ulog``/``ulo``/``uhi`` the same unfloored, 0 while unsolved (``metrics.unfloored_log_sum``). Beyond L_w (the last index + 1, or the sample count in independent mode) every
contribution is constant. A set's curves are the sums over its workloads, so the floored geomean
at N is ``exp(log_sum(N) / |W|)`` (exactly ``metrics.floored_geomean``), the unfloored one
``exp(ulog_sum(N) / solved_sum(N))`` (``metrics.unfloored_geomean``), solved(N) is
``solved_sum(N)`` and fast@N is ``fast_sum(N) / |W|``: any N is answered from one summary row.
Curves are stored packed, one float64 record per budget N (``pack_curves``): a board reads the
value at N of hundreds of summaries in microseconds.

Folding. ``fold`` adds ONE sample (``FoldSample``, built by ``samples``) to its workload's ``WorkloadState``
with ``metrics.update``; ``build`` folds many, in any order. ``WorkloadState.to_row_fields``
gives the derived columns of the workload's ``WorkloadResult`` row (``refresh`` stores them).
"""

from __future__ import annotations

import array
import bisect
import dataclasses
import math
import struct
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from jaxbench import metrics
from jaxbench.metrics import INDEPENDENT, WorkloadAggregate
from jaxbench.record import Outcome

CURVE_KEYS = ("log", "lo", "hi", "solved", "fast", "ulog", "ulo", "uhi")
_OLD_KEYS = 5  # blobs packed before the unfloored curves: those read as NaN until a rebuild
HI_CAP = 1e12  # an interval whose high end is +inf (noise swamps the time) is capped here
LO_CAP = 1e-12  # an interval whose low end is 0 (noise swamps the baseline) is raised here


# --------------------------------------------------------------------------------------------
# Packed curves
# --------------------------------------------------------------------------------------------


# Layout: a little-endian uint32 header (L | ROWS), then one record of the CURVE_KEYS values
# (float64) per budget N, the LAST N FIRST. A board reads one record per summary in SQL
# (``record_start``: the full budget is the first record, a prefix the database reads without
# the rest) instead of fetching every curve. Headers without ROWS are the earlier layout (one
# array per key, N ascending; before the unfloored curves, five keys): still read, repacked
# by the migration leaderboard 0005.
ROWS = 0x80000000
HEADER = 4
RECORD = 8 * len(CURVE_KEYS)  # bytes of one budget's record


def pack_curves(curves: Mapping[str, Iterable[float]] | None) -> bytes:
    """``{key: [v_1 .. v_L]}`` for the keys of CURVE_KEYS (equal lengths) -> bytes."""
    if not curves:
        return struct.pack("<I", ROWS)
    cols = [array.array("d", curves[k]) for k in CURVE_KEYS]
    n = len(cols[0])
    if any(len(c) != n for c in cols):
        raise ValueError("curves must have equal lengths")
    out = array.array("d", bytes(RECORD * n))
    for i, c in enumerate(cols):
        c.reverse()
        out[i :: len(CURVE_KEYS)] = c
    if sys.byteorder != "little":
        out.byteswap()
    return struct.pack("<I", n | ROWS) + out.tobytes()


def unpack_curves(blob: bytes | bytearray | memoryview | None) -> dict[str, array.array[float]]:
    data = bytes(blob or b"")
    if len(data) < HEADER:
        return {k: array.array("d") for k in CURVE_KEYS}
    (header,) = struct.unpack_from("<I", data)
    n = header & ~ROWS
    arr = array.array("d")
    if header & ROWS:
        arr.frombytes(data[HEADER : HEADER + RECORD * n])
        if sys.byteorder != "little":
            arr.byteswap()
        out = {}
        for i, k in enumerate(CURVE_KEYS):
            col = arr[i :: len(CURVE_KEYS)]
            col.reverse()
            out[k] = col
        return out
    arr.frombytes(data[HEADER : HEADER + 8 * n * len(CURVE_KEYS)])
    if sys.byteorder != "little":
        arr.byteswap()
    if len(arr) == n * _OLD_KEYS:  # packed before the unfloored curves
        arr.extend([math.nan] * (n * (len(CURVE_KEYS) - _OLD_KEYS)))
    return {k: arr[i * n : (i + 1) * n] for i, k in enumerate(CURVE_KEYS)}


def record_start(length: int, n: int | None) -> int:
    """0-based offset of the record at budget ``n`` (None: the full budget) in a packed blob of
    ``length`` bytes. The SQL twin is ``leaderboard.curve_points``; beyond the last N the
    curves are constant, so any n >= L reads the first record."""
    stored = max(length - HEADER, 0) // RECORD
    return HEADER + RECORD * (0 if n is None else max(stored - n, 0))


def point_of(blob: bytes | bytearray | memoryview | None, n: int | None) -> bytes:
    """The record at budget ``n`` of a packed blob (empty: no curve, or n == 0)."""
    data = bytes(blob or b"")
    if n == 0 or len(data) < HEADER:
        return b""
    if not struct.unpack_from("<I", data)[0] & ROWS:
        data = pack_curves(unpack_curves(data))
    start = record_start(len(data), n)
    return data[start : start + RECORD]


def unpack_point(record: bytes | bytearray | memoryview | str | None) -> dict[str, array.array[float]]:
    """One record as curves of length 1 (none when empty): ``set_values(unpack_point(r), size)``
    equals ``set_values(curves, size, n)`` for ``r = point_of(pack_curves(curves), n)``."""
    data = bytes(record) if record and not isinstance(record, str) else b""  # SQLite: '' for an empty slice
    arr = array.array("d")
    if len(data) == RECORD:
        arr.frombytes(data)
        if sys.byteorder != "little":
            arr.byteswap()
    return {k: arr[i : i + 1] for i, k in enumerate(CURVE_KEYS)}


def curve_value(values: Sequence[float], n: int | None) -> float:
    """Value of a curve at budget n (None: full budget); 0.0 before the first sample and for
    an empty curve; constant beyond its end."""
    if not len(values) or n == 0:
        return 0.0
    if n is None or n >= len(values):
        return values[-1]
    return values[n - 1]


def _pad(values: Iterable[float], length: int) -> list[float]:
    values = list(values)
    fill = values[-1] if values else 0.0
    return values + [fill] * (length - len(values))


def add_curves(
    total: Mapping[str, Any], new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> dict[str, list[float]]:
    """``total + new - old`` element-wise, every curve extended by its last value."""
    length = max(len(total["log"]), len(new["log"]), len(old["log"]) if old else 0)
    out: dict[str, list[float]] = {}
    for k in CURVE_KEYS:
        t, a = _pad(total[k], length), _pad(new[k], length)
        if old:
            b = _pad(old[k], length)
            out[k] = [x + y - z for x, y, z in zip(t, a, b)]
        else:
            out[k] = [x + y for x, y in zip(t, a)]
    return out


def empty_curves() -> dict[str, list[float]]:
    return {k: [] for k in CURVE_KEYS}


# --------------------------------------------------------------------------------------------
# Per-workload state, folding and curves
# --------------------------------------------------------------------------------------------


class DuplicateSample(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class FoldSample:
    """One finished sample as the aggregates need it."""

    workload_id: int
    index: int
    outcome: str
    speedup: float | None = None
    low: float | None = None  # the interval's low end (None: legacy row)
    interval: tuple[float, float] | None = None  # speedup interval from the timings
    measured: bool = False  # interval = the 95% one timed side by side
    median_s: float | None = None  # the candidate's time
    baseline_median_s: float | None = None
    precheck: bool = False  # stopped by the pre-check
    jax_version: str = ""
    harness_version: str = ""
    finished_at: Any = None


class StoredState(Protocol):
    """What ``WorkloadState.from_row`` reads of a stored ``WorkloadResult`` row (the model lives
    above this pure module)."""

    aggregate: dict[str, Any]
    folded: list[int]
    intervals: dict[str, list[Any]]
    precheck_stopped: int


@dataclasses.dataclass
class WorkloadState:
    agg: WorkloadAggregate = dataclasses.field(default_factory=WorkloadAggregate)
    folded: set[int] = dataclasses.field(default_factory=set)
    # index -> [low, high, candidate median_s, baseline median_s, measured (1: the 95% interval
    # timed side by side; 0: timed before intervals existed)] for the progression records
    records: dict[int, list[float | None]] = dataclasses.field(default_factory=dict)
    precheck_stopped: int = 0

    @classmethod
    def from_row(cls, row: StoredState | None) -> WorkloadState:
        if row is None or not row.aggregate:
            return cls()
        return cls(
            agg=WorkloadAggregate.from_dict(row.aggregate),
            folded=set(row.folded),
            records={int(k): list(v) for k, v in (row.intervals or {}).items()},
            precheck_stopped=row.precheck_stopped,
        )

    def best_record(self) -> tuple[int | None, list[float | None] | None]:
        if not self.agg.progression:
            return None, None
        i = self.agg.progression[-1][0]
        return i, self.records.get(i)

    def to_row_fields(self, mode: str) -> dict[str, Any]:
        agg = self.agg
        best_index, rec = self.best_record()
        return {
            "aggregate": agg.to_dict(),
            "n_samples": agg.n_samples,
            "n_correct": agg.n_correct,
            "n_faster": agg.n_faster,
            "best_speedup": agg.best_speedup,
            "best_index": best_index,
            "best_low": rec[0] if rec else None,
            "best_high": rec[1] if rec else None,
            # a record folded before the flag existed (4 entries) says nothing: a rebuild tells
            "best_before_intervals": rec is not None and len(rec) > 4 and not rec[4],
            "n_tie": agg.count(Outcome.CORRECT_TIE),
            "best_median_s": rec[2] if rec else None,
            "baseline_median_s": rec[3] if rec else None,
            "first_correct_index": agg.first_correct_index,
            "first_faster_index": agg.first_faster_index,
            "precheck_stopped": self.precheck_stopped,
            "folded": sorted(self.folded),
            "intervals": {str(k): v for k, v in sorted(self.records.items())},
            "curves": pack_curves(workload_curves(agg, self.records, mode)),
        }


def fold(state: WorkloadState, sample: FoldSample) -> WorkloadState:
    """Fold ONE sample into ``state`` (in place) with ``metrics.update``; raises
    DuplicateSample when its index was folded already."""
    if sample.index in state.folded:
        raise DuplicateSample(f"sample {sample.index} of workload {sample.workload_id} already folded")
    state.agg = metrics.update(state.agg, sample.index, sample.outcome, sample.speedup, sample.low)
    state.folded.add(sample.index)
    if sample.precheck:
        state.precheck_stopped += 1
    if sample.outcome in metrics.CORRECT_OUTCOMES:
        in_prog = {i for i, _ in state.agg.progression}
        if sample.index in in_prog:
            lo, hi = sample.interval or (sample.speedup, sample.speedup)
            state.records[sample.index] = [lo, hi, sample.median_s, sample.baseline_median_s, int(sample.measured)]
        state.records = {i: v for i, v in state.records.items() if i in in_prog}
    return state


def build(samples: Iterable[FoldSample]) -> tuple[dict[int, WorkloadState], dict[str, Any]]:
    """Fold every sample (any order) through ``fold``: per-workload states and the summary's
    accumulated fields (counts, versions, last time)."""
    states: dict[int, WorkloadState] = {}
    counts = dict.fromkeys(metrics.OUTCOMES, 0)
    jax: set[str] = set()
    harness: set[str] = set()
    last: Any = None
    for s in samples:
        st = states.setdefault(s.workload_id, WorkloadState())
        fold(st, s)
        counts[s.outcome] += 1
        if s.jax_version:
            jax.add(s.jax_version)
        if s.harness_version:
            harness.add(s.harness_version)
        if s.finished_at is not None and (last is None or s.finished_at > last):
            last = s.finished_at
    return states, {
        "counts": counts,
        "jax_versions": sorted(jax),
        "harness_versions": sorted(harness),
        "last_evaluated_at": last,
    }


def curve_length(agg: WorkloadAggregate, mode: str) -> int:
    if mode == INDEPENDENT:
        return agg.n_samples
    return 0 if agg.max_index is None else agg.max_index + 1


def _floored_log(x: float | None) -> float:
    return math.log(min(x, HI_CAP)) if x is not None and x > 1.0 else 0.0


def _raw_log(x: float | None) -> float:
    assert x is not None  # a record's ends are set
    return math.log(min(max(x, LO_CAP), HI_CAP))


def _independent_log_curve(agg: WorkloadAggregate, length: int, floored: bool = True) -> list[float]:
    """E[ln s_w(N)] for N = 1..length in independent mode: ``metrics.expected_log_speedup`` for
    every N at once. The weight of the k-th smallest value, C(k-1, N-1) / C(n, N), follows
    w(N+1) = w(N) (k - N)(N + 1) / (N (n - N)) from w(1) = 1/n (tests check it against
    ``metrics.expected_log_speedup`` at every N). ``floored=False``: every correct speedup
    (``metrics.unfloored_log_sum``); the other samples rank below them."""
    n = agg.n_samples
    # the point speedups above 1 (the non-zero logarithms): a tie's point may be one of them
    cut = bisect.bisect_right(agg.correct_speedups, 1.0) if floored else 0
    faster = agg.correct_speedups[cut:]
    if not faster or n == 0:
        return [0.0] * length
    first_rank = n - len(faster)
    ranks = [first_rank + j + 1 for j in range(len(faster))]
    logs = [math.log(v) for v in faster]
    weights = [1.0 / n] * len(faster)
    out = []
    for big_n in range(1, length + 1):
        if big_n >= n:
            out.append(math.log(faster[-1]))
            continue
        out.append(math.fsum(lg * w for lg, w in zip(logs, weights)))
        factor = (big_n + 1) / (big_n * (n - big_n))
        weights = [w * (k - big_n) * factor if k > big_n else 0.0 for w, k in zip(weights, ranks)]
    return out


def workload_curves(agg: WorkloadAggregate, records: Mapping[int, Any], mode: str) -> dict[str, list[float]]:
    """The workload's contribution curves for N = 1..curve_length (see the module docstring)."""
    length = curve_length(agg, mode)
    if length == 0:
        return empty_curves()
    if mode == INDEPENDENT:
        solved = [metrics.solve_probability(agg, n, mode) for n in range(1, length + 1)]
        fast = [metrics.fast_probability(agg, n, metrics.DEFAULT_P, mode) for n in range(1, length + 1)]
    else:  # steps: 1.0 from the first N that holds a correct (faster) sample
        fc = agg.first_correct_index if agg.n_correct else None
        ff = agg.first_faster_index if agg.n_correct else None
        solved = [1.0 if fc is not None and fc < n else 0.0 for n in range(1, length + 1)]
        fast = [1.0 if ff is not None and ff < n else 0.0 for n in range(1, length + 1)]
    if mode == INDEPENDENT:
        logs = _independent_log_curve(agg, length)
        ulogs = _independent_log_curve(agg, length, floored=False)
        lo, hi, ulo, uhi = list(logs), list(logs), list(ulogs), list(ulogs)
        if agg.progression:  # at the full budget: the interval of the best sample
            rec = records.get(agg.progression[-1][0])
            if rec:
                lo[-1], hi[-1] = _floored_log(rec[0]), _floored_log(rec[1])
                ulo[-1], uhi[-1] = _raw_log(rec[0]), _raw_log(rec[1])
        return {"log": logs, "lo": lo, "hi": hi, "solved": solved, "fast": fast, "ulog": ulogs, "ulo": ulo, "uhi": uhi}
    # Sequential: every value at N is a step of the progression (the running best of the
    # samples with index < N), so one walk gives all N (equal to metrics.expected_log_speedup
    # at every N; tests check it).
    logs, lo, hi, ulogs, ulo, uhi = [], [], [], [], [], []
    prog = agg.progression
    j = 0
    cur = (0.0, 0.0, 0.0)
    ucur = (0.0, 0.0, 0.0)
    for n in range(1, length + 1):
        if j < len(prog) and prog[j][0] < n:
            while j < len(prog) and prog[j][0] < n:
                j += 1
            i, s = prog[j - 1]
            rec = records.get(i)
            cur = (
                math.log(s) if s > 1.0 else 0.0,
                _floored_log(rec[0] if rec else s),
                _floored_log(rec[1] if rec else s),
            )
            ucur = (math.log(s), _raw_log(rec[0] if rec else s), _raw_log(rec[1] if rec else s))
        logs.append(cur[0])
        lo.append(cur[1])
        hi.append(cur[2])
        ulogs.append(ucur[0])
        ulo.append(ucur[1])
        uhi.append(ucur[2])
    return {"log": logs, "lo": lo, "hi": hi, "solved": solved, "fast": fast, "ulog": ulogs, "ulo": ulo, "uhi": uhi}


# --------------------------------------------------------------------------------------------
# A set's values
# --------------------------------------------------------------------------------------------


def set_values(curves: Mapping[str, Any], size: int, n: int | None = None) -> dict[str, Any]:
    """solved, floored geomean (+ interval), unfloored geomean (+ interval; None when nothing
    is solved or the curves predate it) and fast@n of one set from its summed curves."""
    if size <= 0:
        return {
            "size": 0, "solved": 0.0, "geomean": 1.0, "low": 1.0, "high": 1.0, "fast": 0.0,
            "ugeomean": None, "ulow": None, "uhigh": None,
        }  # fmt: skip
    solved = curve_value(curves["solved"], n)
    unf = [curve_value(curves[k], n) if k in curves else math.nan for k in ("ulog", "ulo", "uhi")]
    ugeomean: float | None = None
    ulow: float | None = None
    uhigh: float | None = None
    if solved > 0 and not any(math.isnan(v) for v in unf):
        ugeomean, ulow, uhigh = (math.exp(v / solved) for v in unf)
    return {
        "size": size,
        "solved": solved,
        "geomean": math.exp(curve_value(curves["log"], n) / size),
        "low": math.exp(curve_value(curves["lo"], n) / size),
        "high": math.exp(curve_value(curves["hi"], n) / size),
        "fast": curve_value(curves["fast"], n) / size,
        "ugeomean": ugeomean,
        "ulow": ulow,
        "uhigh": uhigh,
    }


def with_upstream(values: dict[str, Any], attempted: int, full_budget: bool = True) -> dict[str, Any]:
    """``values`` (a :func:`set_values` result) with the set's ``attempted`` workload count and
    ``upstream``, the public suite's own score over them (``metrics.upstream_score``); None below
    the full budget, where the suite's score is not defined."""
    values["attempted"] = attempted
    values["upstream"] = metrics.upstream_score(values["geomean"], values["size"], attempted) if full_budget else None
    return values
