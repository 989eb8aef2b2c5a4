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
* unfloored geomean(N) = exp(mean of ln best_w(N)) over the workloads solved within N, the raw
  best speedups (possibly < 1); an unsolved or missing workload contributes nothing; None
  when none is solved. It ranks boards where nothing beats XLA (the floored one is 1.0 there).
* gap to expert: the study's per workload ``s_w / max(1, expert speedup)``, and the ratio of
  the floored geomean of S to the floored geomean of the experts on the same set ("77% of
  expert"). The raw gap ``best_w / expert speedup`` (``raw_expert_gaps``) compares the
  unfloored speedups: below 1 whenever the kernel is slower than the expert.

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

from .aggregate import (
    API_RUNTIME_FAILURE_OUTCOMES,
    CORRECT_OUTCOMES,
    DEFAULT_P,
    INDEPENDENT,
    MODES,
    OUTCOMES,
    SEQUENTIAL,
    Sample,
    WorkloadAggregate,
    from_samples,
    from_sequence,
    select,
    update,
)
from .cost import per_dollar, per_solved
from .expert import expert_gaps, expert_ratio, raw_expert_gaps
from .noise import geomean_interval, relative_spread, speedup_interval, tied, timing_summary
from .over_sets import (
    api_runtime_failure_share,
    curve_length,
    fast_p,
    fast_p_curve,
    floored_geomean,
    floored_geomean_of,
    geomean_curve,
    outcome_counts,
    outcome_shares,
    per_sample_correctness,
    solved,
    solved_curve,
    unfloored_geomean,
    unfloored_geomean_of,
    unfloored_log_sum,
    upstream_score,
)
from .per_workload import (
    best_within,
    expected_log_speedup,
    fast_probability,
    pass_at_k,
    solve_probability,
    workload_speedup,
)

__all__ = [
    "OUTCOMES",
    "CORRECT_OUTCOMES",
    "API_RUNTIME_FAILURE_OUTCOMES",
    "SEQUENTIAL",
    "INDEPENDENT",
    "MODES",
    "DEFAULT_P",
    "Sample",
    "WorkloadAggregate",
    "update",
    "from_samples",
    "from_sequence",
    "select",
    "best_within",
    "workload_speedup",
    "solve_probability",
    "fast_probability",
    "pass_at_k",
    "expected_log_speedup",
    "floored_geomean",
    "floored_geomean_of",
    "unfloored_geomean",
    "unfloored_geomean_of",
    "upstream_score",
    "unfloored_log_sum",
    "solved",
    "fast_p",
    "curve_length",
    "fast_p_curve",
    "solved_curve",
    "geomean_curve",
    "outcome_counts",
    "outcome_shares",
    "per_sample_correctness",
    "api_runtime_failure_share",
    "expert_gaps",
    "expert_ratio",
    "raw_expert_gaps",
    "timing_summary",
    "relative_spread",
    "speedup_interval",
    "geomean_interval",
    "tied",
    "per_dollar",
    "per_solved",
]
