"""Fold finished evaluations into the leaderboard aggregates (``leaderboard.models``).

One module per job:

* ``curves``: the pure computations over samples (no Django): folding samples into a workload's
  state with ``metrics.update``, its contribution curves, packed curves and a set's values.
* ``samples``: the per-candidate ``FoldSample`` built from evaluation rows (the outcome that
  counts for each candidate) or from a trace's reported outcomes.
* ``refresh``: the database side: ``refresh_for_evaluation`` (fold ONE evaluation), the full
  rebuilds, and the workload sets the SubmissionSummary / WorkloadResult rows are summed over.

Import from those modules. The names below are those the callers that use the package as one
namespace read (tests/leaderboard/test_aggregates.py, benchmarks/leaderboard_load.py).
"""

from jaxbench.metrics.curves import (
    WorkloadState,
    _floored_log,
    _independent_log_curve,
    build,
    curve_length,
    set_values,
    unpack_curves,
    workload_curves,
)
from jaxbench.workloads.sets import SET_FILTERS, SET_NAMES
from leaderboard.aggregates.refresh import (
    _candidate_totals,
    ensure_reported,
    rebuild_reported,
    rebuild_submission,
    refresh_for_evaluation,
    set_sizes,
    summary_from_states,
    workload_set_map,
)
from leaderboard.aggregates.samples import sample_from_evaluation

__all__ = [
    "SET_FILTERS",
    "SET_NAMES",
    "WorkloadState",
    "_candidate_totals",
    "_floored_log",
    "_independent_log_curve",
    "build",
    "curve_length",
    "ensure_reported",
    "rebuild_reported",
    "rebuild_submission",
    "refresh_for_evaluation",
    "sample_from_evaluation",
    "set_sizes",
    "set_values",
    "summary_from_states",
    "unpack_curves",
    "workload_curves",
    "workload_set_map",
]
