"""Leaderboard metrics: pure functions, no Django, no database (stdlib only).

Definitions (DESIGN.md, "Metrics"). For a submission S on hardware H over a workload set W
(all 50, production 17, KernelBench 33, expert 8), with the samples of every workload ordered
by their index 0, 1, 2, ...:

* ``s_w(N) = max(1, max speedup of the correct samples with index < N)``, and 1 if there is
  none. A wrong, failed or slower kernel counts as 1.0: the system would keep the XLA kernel.
* floored geomean(N) ``= exp(mean over W of ln s_w(N))``; a workload without samples counts 1.0.
* ``solved(N)`` = number of workloads with at least one correct sample with index < N.
* ``fast_p@N`` = fraction of W with a correct sample with index < N and speedup > p
  (default p = 1.0). The fast@N curve is fast_p@N for N = 1..max.
* per-sample correctness = correct samples / all samples; outcome shares over the taxonomy
  ``OUTCOMES``; "correct" means ``correct_slower``, ``correct_tie`` or ``correct_faster``.
* gap to expert: per workload ``s_w / max(1, expert speedup)``, and the ratio of the floored
  geomean of S to the floored geomean of the experts on the same set ("77% of expert").

Conventions used by every function here:

* ``n`` is the sample budget N (an int >= 0); ``n=None`` means "all samples folded so far".
* A workload set is passed as a non-empty sequence of ``WorkloadAggregate``, one per workload
  of W, in any order; ``None`` (or an empty aggregate) stands for a workload without samples,
  which still counts in every denominator. ``select()`` builds such a list from a mapping.
* Speed metrics use the numeric speedup (``t_XLA / t_candidate``) of correct samples only.
  Each correct sample has two numbers: its point speedup (the median of its paired ratios),
  used for the best speedup and the geomeans, and its conservative bound ``low`` (the lower
  end of its 95% interval), used for everything that means "faster": fast_p@N counts a sample
  only when ``low > p``, and ``correct_faster`` means ``low > 1``. A tie (``correct_tie``:
  the interval contains 1) is correct but never faster, whatever its point. Rows timed before
  intervals existed have no interval: their ``low`` is their point (the old rule).
  ``update`` checks that outcome, point and ``low`` agree. A speedup reported with a
  non-correct outcome is ignored.

Two sampling modes:

* ``'sequential'`` (a search; the order matters): every metric at N looks at the samples with
  index < N exactly as defined above.
* ``'independent'`` (best-of-N; the n finished samples are i.i.d. draws and N of them are
  imagined drawn without replacement). Per workload with n samples, c of which qualify:
  ``P(at least one of N qualifies) = 1 - C(n-c, N) / C(n, N)`` (the unbiased pass@k
  estimator), and for N > n the full-sample value (1 if c > 0 else 0). fast_p@N averages it
  over W with c = correct samples whose speedup > p; solved(N) sums it over W with
  c = correct samples (an expected count, a float).
  The expected floored geomean is ``exp(mean over W of E[ln s_w(N)])``, the expectation taken
  over a uniformly random N-subset of the workload's n samples. This is exactly
  ``exp(E[ln G_N])`` (the geometric expectation of the floored geomean of a random draw), so it
  composes with the geomean by linearity, and for N >= n it equals the deterministic
  full-sample floored geomean. Per workload, with the floored sample values sorted ascending
  ``v_1 <= ... <= v_n`` (``v = max(1, speedup)`` for correct samples, 1 for the others), the
  maximum of a random N-subset is ``v_k`` with probability ``C(k-1, N-1) / C(n, N)``
  (ties broken by position, which does not change the value), hence
  ``E[ln s_w(N)] = sum_k ln(v_k) * C(k-1, N-1) / C(n, N)``; only the values > 1 have a
  non-zero logarithm, so the aggregate keeps the sorted multiset of correct speedups.

Per-workload aggregates (``WorkloadAggregate``) answer every N in both modes without
rescanning samples; ``update`` folds one finished evaluation in at a time, in any order.
"""
from __future__ import annotations

import bisect
import dataclasses
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from jaxbench import record as _record   # the outcome list and the "faster" rule
from jaxbench.record import Outcome

__all__ = [
    "OUTCOMES", "CORRECT_OUTCOMES", "API_RUNTIME_FAILURE_OUTCOMES", "SEQUENTIAL", "INDEPENDENT",
    "MODES", "DEFAULT_P",
    "Sample", "WorkloadAggregate", "update", "from_samples", "from_sequence", "select",
    "best_within", "workload_speedup", "solve_probability", "fast_probability", "pass_at_k",
    "expected_log_speedup", "floored_geomean", "floored_geomean_of", "solved", "fast_p",
    "curve_length", "fast_p_curve", "solved_curve", "geomean_curve",
    "outcome_counts", "outcome_shares", "per_sample_correctness", "api_runtime_failure_share",
    "expert_gaps", "expert_ratio",
    "timing_summary", "relative_spread", "speedup_interval", "geomean_interval", "tied",
    "per_solved",
]

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


def _check_outcome(outcome: Any) -> str:
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
    index: int
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
            correct_lows=tuple(float(s) for s in (data.get("correct_lows")
                                                  if "correct_lows" in data
                                                  else data.get("correct_speedups")) or ()),
            low_progression=tuple((int(i), float(s)) for i, s in
                                  (data.get("low_progression") if "low_progression" in data
                                   else data.get("progression")) or ()),
        )
        agg.validate()
        return agg

    def validate(self) -> None:
        """Raise ValueError unless the fields are mutually consistent."""
        def fail(msg: str) -> None:
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
            if prog or self.low_progression or self.best_speedup is not None \
                    or self.first_correct_index is not None or self.first_faster_index is not None:
                fail("fields set without correct samples")
            return
        if not prog:
            fail("empty progression with correct samples")
        if self.first_correct_index != prog[0][0] or self.best_speedup != prog[-1][1] \
                or self.best_speedup != cs[-1]:
            fail("first_correct_index / best_speedup disagree with the progression")
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


def _with_record(prog: tuple, index: int, value: float) -> tuple:
    """``prog`` (a record progression) with sample ``index`` of ``value`` folded in: it is a
    record iff ``value`` beats the last entry with a smaller index; entries after it that it
    now dominates are dropped (contiguous, since the values increase)."""
    indices = [i for i, _ in prog]
    pos = bisect.bisect_left(indices, index)
    if pos > 0 and prog[pos - 1][1] >= value:
        return prog                                       # not a record: nothing changes
    end = pos
    while end < len(prog) and prog[end][1] <= value:      # now dominated by (index, value)
        end += 1
    return prog[:pos] + ((index, value),) + prog[end:]


def update(agg: WorkloadAggregate | None, index: int, outcome: str,
           speedup: float | None = None, low: float | None = None) -> WorkloadAggregate:
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
    common = dict(
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
        first_correct_index=(index if agg.first_correct_index is None
                             else min(agg.first_correct_index, index)),
        first_faster_index=(agg.first_faster_index if not faster
                            else index if agg.first_faster_index is None
                            else min(agg.first_faster_index, index)),
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


def select(by_workload: Mapping[str, WorkloadAggregate | None],
           workload_ids: Iterable[str]) -> list[WorkloadAggregate]:
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


# --------------------------------------------------------------------------------------------
# Per-workload values
# --------------------------------------------------------------------------------------------

def best_within(agg: WorkloadAggregate | None, n: int | None = None) -> float | None:
    """Raw (unfloored) best speedup of the correct samples with index < n (sequential order);
    None if there is none. n=None: all samples."""
    n = _check_n(n)
    if agg is None or not agg.progression:
        return None
    if n is None:
        return agg.progression[-1][1]
    pos = bisect.bisect_left([i for i, _ in agg.progression], n)   # entries with index < n
    return agg.progression[pos - 1][1] if pos else None


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(a random k-subset of n samples holds at least one of the c
    qualifying ones) = 1 - C(n-c, k) / C(n, k); for k > n the full-sample value
    (1.0 if c > 0 else 0.0). The ratio of exact integers is rounded once."""
    if not (0 <= c <= n) or k < 0:
        raise ValueError(f"need 0 <= c <= n and k >= 0, got n={n}, c={c}, k={k}")
    if k > n:
        return 1.0 if c > 0 else 0.0
    if c == 0 or k == 0:
        return 0.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def solve_probability(agg: WorkloadAggregate | None, n: int | None = None,
                      mode: str = SEQUENTIAL) -> float:
    """Sequential: 1.0 if a correct sample has index < n, else 0.0. Independent: the unbiased
    probability that a random n-subset holds a correct sample."""
    n, mode = _check_n(n), _check_mode(mode)
    if agg is None or agg.n_correct == 0:
        return 0.0
    if n is None:
        return 1.0
    if mode == SEQUENTIAL:
        return 1.0 if agg.first_correct_index < n else 0.0
    return pass_at_k(agg.n_samples, agg.n_correct, n)


def fast_probability(agg: WorkloadAggregate | None, n: int | None = None, p: float = DEFAULT_P,
                     mode: str = SEQUENTIAL) -> float:
    """Sequential: 1.0 if a correct sample with index < n is faster than p (its interval's low
    end above p), else 0.0 (for p = 1 from ``first_faster_index``; otherwise from the first
    entry of the lows' progression above p, the first sample whose running best low exceeds
    p). Independent: the unbiased probability that a random n-subset holds such a sample."""
    n, mode = _check_n(n), _check_mode(mode)
    p = float(p)
    if agg is None or agg.n_correct == 0:
        return 0.0
    if mode == INDEPENDENT:
        if p == 1.0:
            c = agg.n_faster
        else:
            c = len(agg.correct_lows) - bisect.bisect_right(agg.correct_lows, p)
        return pass_at_k(agg.n_samples, c, agg.n_samples if n is None else n)
    if p == 1.0:
        first = agg.first_faster_index
    else:
        lows = [s for _, s in agg.low_progression]
        pos = bisect.bisect_right(lows, p)                  # first entry with low > p
        first = agg.low_progression[pos][0] if pos < len(lows) else None
    if first is None:
        return 0.0
    return 1.0 if n is None or first < n else 0.0


def _n_above_one(agg: WorkloadAggregate | None) -> int:
    """Correct samples whose POINT speedup is above 1 (the geomean's non-zero logarithms; a
    tie's point may be one of them)."""
    if agg is None:
        return 0
    return len(agg.correct_speedups) - bisect.bisect_right(agg.correct_speedups, 1.0)


def expected_log_speedup(agg: WorkloadAggregate | None, n: int | None = None,
                         mode: str = SEQUENTIAL) -> float:
    """E[ln s_w(n)]. Sequential: exactly ln s_w(n). Independent: the expectation over a uniformly
    random n-subset of the n_samples samples, ``sum_k ln(v_k) C(k-1, n-1) / C(n_samples, n)``
    over the floored values sorted ascending (see the module docstring); n >= n_samples or
    None gives the full-sample value."""
    n, mode = _check_n(n), _check_mode(mode)
    above = _n_above_one(agg)
    if above == 0:
        return 0.0
    if mode == SEQUENTIAL:
        best = best_within(agg, n)
        return math.log(best) if best is not None and best > 1.0 else 0.0
    total = agg.n_samples
    if n is None or n >= total:
        return math.log(agg.correct_speedups[-1])
    if n == 0:
        return 0.0
    faster = agg.correct_speedups[len(agg.correct_speedups) - above:]
    denom = math.comb(total, n)
    first_rank = total - len(faster)          # faster[j] has 1-based rank first_rank + j + 1
    return math.fsum(math.log(v) * (math.comb(first_rank + j, n - 1) / denom)
                     for j, v in enumerate(faster))


def workload_speedup(agg: WorkloadAggregate | None, n: int | None = None,
                     mode: str = SEQUENTIAL) -> float:
    """Sequential: s_w(n) = max(1, best correct speedup with index < n), 1.0 if none.
    Independent: exp(E[ln s_w(n)]), the geometric expectation over random n-subsets."""
    if _check_mode(mode) == SEQUENTIAL:
        best = best_within(agg, n)
        return 1.0 if best is None else max(1.0, best)
    return math.exp(expected_log_speedup(agg, n, mode))


# --------------------------------------------------------------------------------------------
# Workload-set metrics
# --------------------------------------------------------------------------------------------

def floored_geomean(aggregates: Iterable[WorkloadAggregate | None], n: int | None = None,
                    mode: str = SEQUENTIAL) -> float:
    """exp(mean over W of ln s_w(n)); every workload floored at 1, none-sampled ones count 1.0.
    Independent mode: the expected floored geomean exp(mean over W of E[ln s_w(n)])."""
    aggs = _aggs(aggregates)
    return math.exp(math.fsum(expected_log_speedup(a, n, mode) for a in aggs) / len(aggs))


def floored_geomean_of(speedups: Iterable[float | None]) -> float:
    """Floored geomean of plain per-workload speedups (e.g. the expert kernels'): each value is
    floored at 1; None (no kernel) counts 1.0."""
    logs = []
    for s in speedups:
        if s is None:
            logs.append(0.0)
            continue
        s = float(s)
        if not math.isfinite(s) or s <= 0.0:
            raise ValueError(f"speedup must be finite and > 0, got {s!r}")
        logs.append(math.log(s) if s > 1.0 else 0.0)
    if not logs:
        raise ValueError("the workload set is empty")
    return math.exp(math.fsum(logs) / len(logs))


def solved(aggregates: Iterable[WorkloadAggregate | None], n: int | None = None,
           mode: str = SEQUENTIAL) -> int | float:
    """Sequential: number of workloads with a correct sample with index < n (an int).
    Independent: the expected number over random n-subsets (a float)."""
    aggs = _aggs(aggregates)
    if _check_mode(mode) == SEQUENTIAL:
        return sum(int(solve_probability(a, n, mode)) for a in aggs)
    return math.fsum(solve_probability(a, n, mode) for a in aggs)


def fast_p(aggregates: Iterable[WorkloadAggregate | None], n: int | None = None,
           p: float = DEFAULT_P, mode: str = SEQUENTIAL) -> float:
    """fast_p@n: fraction of W with a correct sample (index < n) whose speedup > p; in
    independent mode the mean over W of the unbiased per-workload estimate."""
    aggs = _aggs(aggregates)
    return math.fsum(fast_probability(a, n, p, mode) for a in aggs) / len(aggs)


def curve_length(aggregates: Iterable[WorkloadAggregate | None], mode: str = SEQUENTIAL) -> int:
    """The N up to which curves run by default: sequential, the largest index folded + 1;
    independent, the largest sample count of a workload."""
    aggs = _aggs(aggregates)
    if _check_mode(mode) == SEQUENTIAL:
        return max((a.max_index + 1 for a in aggs if a.max_index is not None), default=0)
    return max(a.n_samples for a in aggs)


def _curve(fn, aggregates, mode: str, n_max: int | None) -> list[tuple[int, Any]]:
    aggs = _aggs(aggregates)
    top = curve_length(aggs, mode) if n_max is None else _check_n(n_max)
    return [(n, fn(aggs, n)) for n in range(1, top + 1)]


def fast_p_curve(aggregates: Iterable[WorkloadAggregate | None], p: float = DEFAULT_P,
                 mode: str = SEQUENTIAL, n_max: int | None = None) -> list[tuple[int, float]]:
    """[(N, fast_p@N) for N = 1..n_max]; n_max defaults to ``curve_length``."""
    return _curve(lambda a, n: fast_p(a, n, p, mode), aggregates, mode, n_max)


def solved_curve(aggregates: Iterable[WorkloadAggregate | None], mode: str = SEQUENTIAL,
                 n_max: int | None = None) -> list[tuple[int, int | float]]:
    """[(N, solved(N)) for N = 1..n_max]."""
    return _curve(lambda a, n: solved(a, n, mode), aggregates, mode, n_max)


def geomean_curve(aggregates: Iterable[WorkloadAggregate | None], mode: str = SEQUENTIAL,
                  n_max: int | None = None) -> list[tuple[int, float]]:
    """[(N, floored geomean(N)) for N = 1..n_max]."""
    return _curve(lambda a, n: floored_geomean(a, n, mode), aggregates, mode, n_max)


# --------------------------------------------------------------------------------------------
# Outcome shares
# --------------------------------------------------------------------------------------------

def outcome_counts(aggregates: Iterable[WorkloadAggregate | None]) -> dict[str, int]:
    """Counts by outcome summed over the workload set (every outcome present, maybe 0)."""
    totals = [0] * len(OUTCOMES)
    for a in _aggs(aggregates):
        for i, c in enumerate(a.counts):
            totals[i] += c
    return dict(zip(OUTCOMES, totals))


def outcome_shares(aggregates: Iterable[WorkloadAggregate | None]) -> dict[str, float] | None:
    """Share of all samples per outcome (sums to 1); None when there are no samples."""
    counts = outcome_counts(aggregates)
    total = sum(counts.values())
    return None if total == 0 else {o: c / total for o, c in counts.items()}


def per_sample_correctness(aggregates: Iterable[WorkloadAggregate | None]) -> float | None:
    """Correct samples / all samples over the set; None when there are no samples."""
    counts = outcome_counts(aggregates)
    total = sum(counts.values())
    return None if total == 0 else sum(counts[o] for o in CORRECT_OUTCOMES) / total


def api_runtime_failure_share(aggregates: Iterable[WorkloadAggregate | None]) -> float | None:
    """(compile_error + runtime_error) / all samples: our reading of the study's "failed at
    compilation or first execution from API/runtime problems". None when there are no samples."""
    counts = outcome_counts(aggregates)
    total = sum(counts.values())
    return None if total == 0 else sum(counts[o] for o in API_RUNTIME_FAILURE_OUTCOMES) / total


# --------------------------------------------------------------------------------------------
# Gap to expert
# --------------------------------------------------------------------------------------------

def _expert_floor(e: float | None) -> float:
    if e is None:
        return 1.0
    e = float(e)
    if not math.isfinite(e) or e <= 0.0:
        raise ValueError(f"expert speedup must be finite and > 0, got {e!r}")
    return max(1.0, e)


def expert_gaps(aggregates: Sequence[WorkloadAggregate | None],
                expert_speedups: Sequence[float | None], n: int | None = None,
                mode: str = SEQUENTIAL) -> list[float]:
    """Per workload s_w(n) / max(1, expert speedup), aligned with the inputs. An expert speedup
    of None (no expert kernel) counts 1.0, like any workload where XLA would be kept."""
    aggs = _aggs(aggregates)
    if len(aggs) != len(expert_speedups):
        raise ValueError("aggregates and expert speedups must be aligned")
    return [workload_speedup(a, n, mode) / _expert_floor(e) for a, e in zip(aggs, expert_speedups)]


def expert_ratio(aggregates: Sequence[WorkloadAggregate | None],
                 expert_speedups: Sequence[float | None], n: int | None = None,
                 mode: str = SEQUENTIAL) -> float:
    """Floored geomean of S / floored geomean of the experts on the same set (0.77 = "77% of
    expert"). Equal to the geometric mean of ``expert_gaps``."""
    aggs = _aggs(aggregates)
    if len(aggs) != len(expert_speedups):
        raise ValueError("aggregates and expert speedups must be aligned")
    return floored_geomean(aggs, n, mode) / floored_geomean_of(expert_speedups)


# --------------------------------------------------------------------------------------------
# Timing noise
# --------------------------------------------------------------------------------------------

def relative_spread(times: Sequence[float], method: str = "iqr") -> float:
    """Relative half-width of a set of timings around their median m.

    * ``'iqr'`` (default): (Q3 - Q1) / (2 m), quartiles by linear interpolation between order
      statistics (``statistics.quantiles(method='inclusive')``, numpy's default). Robust to the
      odd outlier iteration, and wider than the standard error of the median, i.e. it covers
      run-to-run drift as well: a deliberately conservative noise band.
    * ``'minmax'``: (max - min) / (2 m), the most conservative.
    One timing gives 0.0.
    """
    xs = [float(t) for t in times]
    if not xs:
        raise ValueError("no timings")
    if any(not math.isfinite(t) or t <= 0.0 for t in xs):
        raise ValueError("timings must be finite and > 0")
    if len(xs) == 1:
        return 0.0
    m = statistics.median(xs)
    if method == "iqr":
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
        return (q3 - q1) / (2.0 * m)
    if method == "minmax":
        return (max(xs) - min(xs)) / (2.0 * m)
    raise ValueError(f"unknown spread method {method!r}")


def timing_summary(times: Sequence[float], method: str = "iqr") -> tuple[float, float]:
    """(median, relative spread) of a timing series, as ``speedup_interval`` takes them."""
    return statistics.median([float(t) for t in times]), relative_spread(times, method)


def speedup_interval(baseline_median: float, baseline_spread: float,
                     cand_median: float, cand_spread: float) -> tuple[float, float]:
    """Interval of speedup = t_XLA / t_candidate given each time as median m and relative
    half-width r (``relative_spread``): the time lies in [m(1 - r), m(1 + r)], so

        low  = m_b (1 - r_b) / (m_c (1 + r_c)),   high = m_b (1 + r_b) / (m_c (1 - r_c)).

    Interval arithmetic (worst case), not a confidence interval. If r_b >= 1 the low end is
    0.0; if r_c >= 1 the high end is +inf (the noise swamps the measurement)."""
    for name, v in (("baseline_median", baseline_median), ("cand_median", cand_median)):
        if not math.isfinite(v) or v <= 0.0:
            raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    for name, v in (("baseline_spread", baseline_spread), ("cand_spread", cand_spread)):
        if not math.isfinite(v) or v < 0.0:
            raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
    low = max(0.0, baseline_median * (1.0 - baseline_spread)) / (cand_median * (1.0 + cand_spread))
    if cand_spread >= 1.0:
        high = math.inf
    else:
        high = baseline_median * (1.0 + baseline_spread) / (cand_median * (1.0 - cand_spread))
    return low, high


def geomean_interval(intervals: Iterable[tuple[float, float] | None]) -> tuple[float, float]:
    """Interval of the floored geomean given one (low, high) speedup interval per workload of W
    (the interval of the sample that defines s_w; None for a workload with no correct sample,
    which is exactly 1). Both ends are floored at 1 per workload; as the floored geomean is
    monotone in every s_w, its interval is exactly [G(lows), G(highs)]."""
    lows, highs = [], []
    for iv in intervals:
        if iv is None:
            lows.append(1.0)
            highs.append(1.0)
            continue
        lo, hi = float(iv[0]), float(iv[1])
        if math.isnan(lo) or math.isnan(hi) or math.isinf(lo) or lo < 0.0 or hi < lo:
            raise ValueError(f"bad interval {iv!r}")
        lows.append(lo)
        highs.append(hi)
    if not lows:
        raise ValueError("the workload set is empty")
    if any(math.isinf(h) and h > 1 for h in highs):
        return floored_geomean_of(lows), math.inf
    return floored_geomean_of(lows), floored_geomean_of(highs)


def tied(row_a: Sequence[float], row_b: Sequence[float]) -> bool:
    """Two leaderboard rows, given as their geomean intervals (low, high), are tied when the
    closed intervals overlap: low_a <= high_b and low_b <= high_a. For symmetric intervals
    (centre c, half-width h) this is the same as |c_a - c_b| <= h_a + h_b: the difference is
    within the combined noise. Touching intervals count as tied (ties are shared ranks, so the
    benefit of the doubt goes to the lower row)."""
    lo_a, hi_a = float(row_a[0]), float(row_a[1])
    lo_b, hi_b = float(row_b[0]), float(row_b[1])
    if hi_a < lo_a or hi_b < lo_b:
        raise ValueError("an interval must have low <= high")
    return lo_a <= hi_b and lo_b <= hi_a


# --------------------------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------------------------

def per_solved(total: float | Iterable[float | None] | None, n_solved: float) -> float | None:
    """Tokens (or cost) per solved workload: sum / n_solved. ``total`` is a sum or the
    per-sample values; None when not reported (None, no values, or any sample missing its
    value, since a partial sum would understate the cost) or when n_solved is 0."""
    if total is None:
        return None
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        values = [total]
    else:
        values = list(total)
        if not values or any(v is None for v in values):
            return None
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"token/cost values must be finite and >= 0, got {v!r}")
    if not n_solved or n_solved <= 0:
        return None
    return math.fsum(values) / n_solved
