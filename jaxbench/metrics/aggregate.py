"""A workload's samples folded into one aggregate (the outcome taxonomy, the two sampling
modes, ``WorkloadAggregate`` and ``update``); see the package docstring for the definitions."""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn, TypedDict

from jaxbench import record as _record  # the outcome list and the "faster" rule
from jaxbench.record import Outcome

# --------------------------------------------------------------------------------------------
# Taxonomy and modes
# --------------------------------------------------------------------------------------------

OUTCOMES: tuple[str, ...] = _record.OUTCOMES
CORRECT_OUTCOMES: frozenset[str] = frozenset(_record.CORRECT_OUTCOMES)
# The study's "API/runtime failures": samples that failed at compilation or first execution.
API_RUNTIME_FAILURE_OUTCOMES: tuple[str, ...] = (Outcome.COMPILE_ERROR, Outcome.RUNTIME_ERROR)
_OUTCOME_POS = {name: i for i, name in enumerate(OUTCOMES)}

SEQUENTIAL = "sequential"
INDEPENDENT = "independent"
MODES = (SEQUENTIAL, INDEPENDENT)
DEFAULT_P = 1.0


def _check_index(index: Any) -> int:
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"sample index must be an int >= 0, got {index!r}")
    return index


def _check_n(n: Any) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"N must be an int >= 0 or None, got {n!r}")
    return n


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


def _check_outcome(outcome: str) -> str:
    if outcome not in _OUTCOME_POS:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {OUTCOMES}")
    return outcome


def _check_speedup(outcome: str, speedup: Any, low: Any = None) -> tuple[float, float]:
    """(point, conservative low) of a correct sample, checked against its outcome."""
    if isinstance(speedup, bool) or not isinstance(speedup, (int, float)):
        raise ValueError(f"a {outcome} sample needs a numeric speedup, got {speedup!r}")
    s = float(speedup)
    if not math.isfinite(s) or s <= 0.0:
        raise ValueError(f"speedup must be finite and > 0, got {speedup!r}")
    if low is None:
        if outcome == Outcome.CORRECT_TIE:
            raise ValueError("a correct_tie sample needs the lower end of its interval")
        lo = s
    else:
        if isinstance(low, bool) or not isinstance(low, (int, float)):
            raise ValueError(f"low must be numeric, got {low!r}")
        lo = float(low)
        if not math.isfinite(lo) or lo <= 0.0 or lo > s:
            raise ValueError(f"low must be finite, > 0 and <= the speedup, got {low!r}")
    if outcome == Outcome.CORRECT_FASTER and not (s > 1.0 and lo > 1.0):
        raise ValueError(f"correct_faster needs speedup and low > 1, got {s!r}, {lo!r}")
    if outcome == Outcome.CORRECT_SLOWER and s > 1.0:
        raise ValueError(f"correct_slower needs speedup <= 1, got {s!r}")
    if outcome == Outcome.CORRECT_TIE and lo > 1.0:
        raise ValueError(f"correct_tie needs low <= 1, got {lo!r}")
    return s, lo


# --------------------------------------------------------------------------------------------
# Per-workload aggregate
# --------------------------------------------------------------------------------------------


class Sample(NamedTuple):
    """One finished evaluation of one workload: its position in the submission's sample order,
    its outcome (one of OUTCOMES) and, for correct outcomes, its speedup over XLA and the lower
    end of its interval (None: timed before intervals existed)."""

    # the field shadows tuple.index, which Python allows and mypy reports as an incompatible override
    index: int  # type: ignore[assignment]
    outcome: str
    speedup: float | None = None
    low: float | None = None


@dataclasses.dataclass(frozen=True)
class WorkloadAggregate:
    """Everything the metrics need about one (submission, workload, hardware), folded from the
    finished evaluations in any order. Immutable; ``update`` returns a new one.

    * ``n_samples``: finished evaluations folded in (all outcomes).
    * ``counts``: one count per outcome, in the order of ``OUTCOMES`` (``outcome_counts`` gives
      a dict).
    * ``n_correct`` / ``n_faster``: correct samples / correct samples faster than XLA (low > 1).
    * ``best_speedup``: the highest speedup of a correct sample (None if none).
    * ``first_correct_index`` / ``first_faster_index``: the smallest index of a correct sample /
      of a correct sample with speedup > 1 (None if none).
    * ``max_index``: the largest index folded in (None if none); the sequential curve runs to
      ``max_index + 1``.
    * ``progression``: the record progression, ``((index, speedup), ...)`` sorted by index: the
      correct samples whose speedup is strictly higher than every correct sample with a smaller
      index. Indices and speedups both strictly increase; the raw best speedup within the first
      N samples is the speedup of the last entry with index < N. Its first entry is the first
      correct sample and its last one the best; its length is the number of records, which is
      short in practice (about ln(n) for a random order).
    * ``correct_speedups``: the sorted multiset of the speedups of all correct samples (for the
      independent mode's order statistics). Its length is n_correct.
    * ``correct_lows``: the sorted multiset of their conservative lows (fast_p in the
      independent mode counts those above p); ``low_progression``: the record progression of
      the lows (fast_p in the sequential mode: the first sample whose running best low
      exceeds p). ``n_faster`` = lows above 1 = ``correct_faster`` samples.
    """

    n_samples: int = 0
    counts: tuple[int, ...] = (0,) * len(OUTCOMES)
    n_correct: int = 0
    n_faster: int = 0
    best_speedup: float | None = None
    first_correct_index: int | None = None
    first_faster_index: int | None = None
    max_index: int | None = None
    progression: tuple[tuple[int, float], ...] = ()
    correct_speedups: tuple[float, ...] = ()
    correct_lows: tuple[float, ...] = ()
    low_progression: tuple[tuple[int, float], ...] = ()

    def count(self, outcome: str) -> int:
        return self.counts[_OUTCOME_POS[_check_outcome(outcome)]]

    @property
    def outcome_counts(self) -> dict[str, int]:
        return dict(zip(OUTCOMES, self.counts))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for a JSONField or an export); ``from_dict`` reverses it."""
        return {
            "n_samples": self.n_samples,
            "counts": self.outcome_counts,
            "n_correct": self.n_correct,
            "n_faster": self.n_faster,
            "best_speedup": self.best_speedup,
            "first_correct_index": self.first_correct_index,
            "first_faster_index": self.first_faster_index,
            "max_index": self.max_index,
            "progression": [[i, s] for i, s in self.progression],
            "correct_speedups": list(self.correct_speedups),
            "correct_lows": list(self.correct_lows),
            "low_progression": [[i, s] for i, s in self.low_progression],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkloadAggregate:
        counts = data.get("counts") or {}
        unknown = set(counts) - set(OUTCOMES)
        if unknown:
            raise ValueError(f"unknown outcomes in counts: {sorted(unknown)}")
        agg = cls(
            n_samples=int(data["n_samples"]),
            counts=tuple(int(counts.get(o, 0)) for o in OUTCOMES),
            n_correct=int(data["n_correct"]),
            n_faster=int(data["n_faster"]),
            best_speedup=None if data.get("best_speedup") is None else float(data["best_speedup"]),
            first_correct_index=data.get("first_correct_index"),
            first_faster_index=data.get("first_faster_index"),
            max_index=data.get("max_index"),
            progression=tuple((int(i), float(s)) for i, s in data.get("progression") or ()),
            correct_speedups=tuple(float(s) for s in data.get("correct_speedups") or ()),
            # aggregates stored before intervals existed: every low is its point
            correct_lows=tuple(
                float(s)
                for s in (data.get("correct_lows") if "correct_lows" in data else data.get("correct_speedups")) or ()
            ),
            low_progression=tuple(
                (int(i), float(s))
                for i, s in (data.get("low_progression") if "low_progression" in data else data.get("progression"))
                or ()
            ),
        )
        agg.validate()
        return agg

    def validate(self) -> None:
        """Raise ValueError unless the fields are mutually consistent."""

        def fail(msg: str) -> NoReturn:
            raise ValueError(f"inconsistent WorkloadAggregate: {msg}")

        if len(self.counts) != len(OUTCOMES) or any(c < 0 for c in self.counts):
            fail("counts")
        if sum(self.counts) != self.n_samples:
            fail("sum(counts) != n_samples")
        if self.n_correct != sum(self.count(o) for o in CORRECT_OUTCOMES):
            fail("n_correct != correct_slower + correct_tie + correct_faster")
        if self.n_faster != self.count(Outcome.CORRECT_FASTER):
            fail("n_faster != correct_faster")
        cs, lows = self.correct_speedups, self.correct_lows
        if len(cs) != self.n_correct or list(cs) != sorted(cs):
            fail("correct_speedups must be the sorted speedups of the correct samples")
        if len(lows) != self.n_correct or list(lows) != sorted(lows):
            fail("correct_lows must be the sorted lows of the correct samples")
        if any(not (math.isfinite(s) and s > 0) for s in cs + lows):
            fail("speedups must be finite and > 0")
        if sum(1 for s in lows if s > 1.0) != self.n_faster:
            fail("n_faster != number of correct lows > 1")
        if (self.max_index is None) != (self.n_samples == 0):
            fail("max_index")
        if self.max_index is not None and self.max_index + 1 < self.n_samples:
            fail("more samples than distinct indices")
        prog = self.progression
        for pr in (prog, self.low_progression):
            for a, b in zip(pr, pr[1:]):
                if not (a[0] < b[0] and a[1] < b[1]):
                    fail("progressions must strictly increase in index and value")
        if self.n_correct == 0:
            if (
                prog
                or self.low_progression
                or self.best_speedup is not None
                or self.first_correct_index is not None
                or self.first_faster_index is not None
            ):
                fail("fields set without correct samples")
            return
        if not prog:
            fail("empty progression with correct samples")
        if self.first_correct_index != prog[0][0] or self.best_speedup != prog[-1][1] or self.best_speedup != cs[-1]:
            fail("first_correct_index / best_speedup disagree with the progression")
        assert self.max_index is not None  # n_correct > 0, so n_samples > 0 (checked above)
        if prog[-1][0] > self.max_index:
            fail("progression index beyond max_index")
        if any(s not in cs for _, s in prog):
            fail("progression speedup not among the correct speedups")
        lp = self.low_progression
        if not lp or lp[0][0] != self.first_correct_index or any(s not in lows for _, s in lp):
            fail("low_progression disagrees with the correct lows")
        faster = [i for i, s in lp if s > 1.0]
        if self.first_faster_index != (faster[0] if faster else None):
            fail("first_faster_index disagrees with the low progression")


def _with_record(prog: tuple[tuple[int, float], ...], index: int, value: float) -> tuple[tuple[int, float], ...]:
    """``prog`` (a record progression) with sample ``index`` of ``value`` folded in: it is a
    record iff ``value`` beats the last entry with a smaller index; entries after it that it
    now dominates are dropped (contiguous, since the values increase)."""
    indices = [i for i, _ in prog]
    pos = bisect.bisect_left(indices, index)
    if pos > 0 and prog[pos - 1][1] >= value:
        return prog  # not a record: nothing changes
    end = pos
    while end < len(prog) and prog[end][1] <= value:  # now dominated by (index, value)
        end += 1
    return prog[:pos] + ((index, value),) + prog[end:]


class _Common(TypedDict):
    n_samples: int
    counts: tuple[int, ...]
    max_index: int


def update(
    agg: WorkloadAggregate | None, index: int, outcome: str, speedup: float | None = None, low: float | None = None
) -> WorkloadAggregate:
    """Fold ONE finished evaluation (sample ``index``, ``outcome``, ``speedup`` and the lower
    end ``low`` of its interval; None for rows timed before intervals existed) into ``agg`` and
    return the new aggregate (``agg`` is not modified; None means empty).

    Samples may finish out of order: a correct sample at index i is a record iff its speedup is
    higher than the last progression entry with index < i; it is then inserted and the entries
    after it whose speedup is <= its own (now dominated) are dropped (the same for the lows'
    progression). Cost O(len(progression) + n_correct) (the latter for the sorted multisets
    used by the independent mode).

    Each index must be folded once. A duplicate that lands on a progression entry (any earlier
    record, the first correct or the first faster sample) raises ValueError; other duplicates
    cannot be seen from the aggregate, so the caller guarantees uniqueness (``from_samples``
    checks it).
    """
    agg = WorkloadAggregate() if agg is None else agg
    index = _check_index(index)
    outcome = _check_outcome(outcome)
    if any(i == index for i, _ in agg.progression + agg.low_progression):
        raise ValueError(f"sample index {index} was already folded in")

    counts = list(agg.counts)
    counts[_OUTCOME_POS[outcome]] += 1
    common: _Common = dict(
        n_samples=agg.n_samples + 1,
        counts=tuple(counts),
        max_index=index if agg.max_index is None else max(agg.max_index, index),
    )
    if outcome not in CORRECT_OUTCOMES:
        return dataclasses.replace(agg, **common)

    s, lo = _check_speedup(outcome, speedup, low)
    speedups = list(agg.correct_speedups)
    bisect.insort(speedups, s)
    lows = list(agg.correct_lows)
    bisect.insort(lows, lo)
    faster = lo > 1.0
    return dataclasses.replace(
        agg,
        **common,
        n_correct=agg.n_correct + 1,
        n_faster=agg.n_faster + (1 if faster else 0),
        best_speedup=s if agg.best_speedup is None else max(agg.best_speedup, s),
        first_correct_index=(index if agg.first_correct_index is None else min(agg.first_correct_index, index)),
        first_faster_index=(
            agg.first_faster_index
            if not faster
            else index
            if agg.first_faster_index is None
            else min(agg.first_faster_index, index)
        ),
        progression=_with_record(agg.progression, index, s),
        correct_speedups=tuple(speedups),
        correct_lows=tuple(lows),
        low_progression=_with_record(agg.low_progression, index, lo),
    )


def from_samples(samples: Iterable[Sample | Sequence[Any]]) -> WorkloadAggregate:
    """Build an aggregate by folding ``(index, outcome, speedup[, low])`` samples (in any
    order). Raises ValueError on a repeated index."""
    agg = WorkloadAggregate()
    seen: set[int] = set()
    for sample in samples:
        index, outcome, speedup, *rest = sample
        if index in seen:
            raise ValueError(f"sample index {index} appears twice")
        seen.add(index)
        agg = update(agg, index, outcome, speedup, rest[0] if rest else None)
    return agg


def from_sequence(results: Iterable[Sequence[Any]]) -> WorkloadAggregate:
    """Build an aggregate from ordered ``(outcome, speedup[, low])`` tuples; the index is the
    position."""
    return from_samples((i, *r) for i, r in enumerate(results))


def select(by_workload: Mapping[str, WorkloadAggregate | None], workload_ids: Iterable[str]) -> list[WorkloadAggregate]:
    """The aggregates of a workload set, aligned with ``workload_ids``; a workload without an
    aggregate gets an empty one (it counts 1.0 / unsolved). Aggregates of other workloads are
    ignored. Raises ValueError on an empty or repeated id list."""
    ids = list(workload_ids)
    if not ids:
        raise ValueError("empty workload set")
    if len(set(ids)) != len(ids):
        raise ValueError("repeated workload id in the set")
    return [by_workload.get(w) or WorkloadAggregate() for w in ids]


def _aggs(aggregates: Iterable[WorkloadAggregate | None]) -> list[WorkloadAggregate]:
    out = [WorkloadAggregate() if a is None else a for a in aggregates]
    if not out:
        raise ValueError("the workload set is empty")
    return out
