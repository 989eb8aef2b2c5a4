"""The JAXBench evaluation harness: the Python API the worker (and the CLI) calls.

Stable API (no Django anywhere under jaxbench)::

    from jaxbench import harness

    record = harness.evaluate(workload, source, *, profile, hardware=None,
                              require_pallas=True, baseline=None, timeouts=None,
                              baseline_cache="memory") -> dict
    base   = harness.measure_baseline(workload, *, profile, hardware=None) -> dict
    base   = harness.baseline_alone(workload, *, profile, hardware=None,
                                    cache="disk") -> dict   # the worker: disk cache first
    low    = harness.lower_for_platform(workload, source, platform="tpu",
                                        profile="full") -> dict
    pool   = harness.WarmPool(platform="cpu")          # one pre-spawned child, JAX imported
    record = pool.evaluate(workload, source, profile=..., ...)   # same arguments as evaluate
    pool.close()
    harness.available_protections(platform=None) -> dict   # what the sandbox can do here
    harness.probe_environment(platform=None) -> dict       # check-env: hardware, versions, ...
    harness.inputs_from_seed(workload, profile, seed_hex)  # rebuild a recorded input set

* ``workload``: an ID, slug or public name (``"12p"``, ``"12p-rmsnorm"``) or a Workload.
* ``source``: the candidate file's text (str). It must define ``workload(*inputs)``.
* ``hardware``: a target slug (``"cpu"``, ``"tpu-v6e"``); None = what the child's JAX reports.
* ``baseline``: a record from ``measure_baseline`` for the same workload, profile, hardware and
  harness version (anything else raises ``ValueError``); None = measure one now (cached in this
  process; with ``baseline_cache="disk"``, as the CLI asks, also on disk across runs:
  ``baseline_cache.py``; ``"fresh"`` measures again). It is the guard's reference only: speedups
  come from the side-by-side timings.
* ``timeouts``: per-phase wall-clock limits in seconds, keys ``startup``, ``compile``,
  ``check``, ``timing``, ``export`` (defaults in :data:`DEFAULT_TIMEOUTS`).

Record formats: :mod:`jaxbench.record`. Failures of the harness itself (the sandbox
cannot start, the child's JAX runs on another platform than the target's, the reference fails)
raise :class:`InfrastructureError`; everything the candidate can cause is an outcome.

How one evaluation runs (TRUST.md 1): two fresh sandboxed children (:mod:`jaxbench.sandbox`).
The **export child** (no device, no inputs) is the only process that imports the candidate: it
traces ``workload`` once on ShapeDtypeStructs and writes that trace's program with ``jax.export``
(the judged program: the native lowering for the chip, a TPU's for the cpu target, plus there each
kernel alone through JAX's generic Pallas interpreter; the timer builds the cpu twin from them,
``profiling/cpu_twin.py``), each file taken once as written, and is closed, every process of it dead,
before the rest starts (``export``). The trusted side draws 64-bit seeds from ``secrets``,
builds the input sets and computes, itself, both the XLA baseline's outputs and the exact answer
(``Workload.exact``: float32 from the same bf16 inputs). The **timer child**, which never
imports candidate code, compiles the exported baseline under one harness-chosen name, reads the
candidate's artifact and describes it before running it (``hlo_cost.py``); the trusted side
verifies it (``verdict.artifact``) and applies the Pallas rules to it
(``pallas_share.assess_artifact``). The timer then compiles it under another name, runs every
input set (check and timing sets alike), and times both programs interleaved in blocks of 5
calls whose order the trusted side draws (5 warm-up and 50 timed calls each) inside one
profiler trace, hashing every output: a timed output that differs from its input set's checked
output is written and checked in full. The trusted side judges every output against the exact
answer with XLA's own error as the allowance (``verdict_math.exact_rule_report``), parses the
trace itself (caps on size and events), selects both programs by name, requires exactly 50
executions of each inside the phase's time window, applies the plausibility gates, and reports
the median of the paired ratios with a seeded 95% bootstrap interval
(``verdict_math.paired_speedup``): faster or slower only when the interval excludes 1, a tie
otherwise. The baseline beside the candidate is checked against the same program timed alone in
a clean child once both children of the candidate are dead (``baseline_guard``): when it ran far
slower beside the candidate, the clean measurement is repeated at once and, if the gap stays,
used instead and the result held for review.

Input sets reach only the timer, and only when the phase that uses them starts. On the
``cpu`` target each child is confined to one core (a cpuset cgroup where available) once JAX
is initialised, the same for baselines and candidates.

Processes: children are started from the calling thread and die with it (the launcher sets
``PR_SET_PDEATHSIG``; bubblewrap's ``--die-with-parent`` below it), so call from long-lived
threads (the warm pool spawns and cleans up from its own thread). The trusted side's own JAX
(inputs, references) is pinned to the CPU platform so a worker never holds the accelerator its
children need; on accelerator targets the references are therefore computed by XLA:CPU on the
host (slow for some ``full`` shapes; see the report of the harness task). On an exclusive
device (TPU, GPU) a child opens its device only once the calling thread holds the device's lock
(:mod:`jaxbench.sandbox.device`), released when that child is dead: calls from several threads
or processes on one device queue there, the wait recorded as ``phases["device_wait_s"]``.

Modules: ``api`` (the calls above, each a short script of :class:`Run` phases), ``run`` (the
typed ``Run``: one case through its children, the record built as it goes, one method a phase:
``prepare``, ``start_timer``, ``start_job`` (answered while ``export`` runs), ``export``,
``load``, ``compile``, ``check``, ``time``), ``outcomes`` (how a timeout, a crash or an exit
ends a run), ``timer_files`` (the timer's outputs and trace, read back), ``prepare`` (the
trusted side's JAX, inputs, answers, exported baseline, the child's files, limits, target),
``export`` (what the export child is asked for), ``speed`` (the speed verdict), ``warm`` (the
warm pool), ``settings`` (the numbers every part shares, and :class:`InfrastructureError`).
"""

from .. import HARNESS_VERSION
from ..sandbox.pair import platform_hint
from .api import (
    available_protections,
    baseline_alone,
    evaluate,
    evaluate_case,
    lower_for_platform,
    measure_baseline,
    probe_environment,
)
from .prepare import exported_baseline, inputs_from_seed, reference_hlo_cost
from .run import Run, new_timer_child
from .settings import (
    BLOCK,
    DEFAULT_TIMEOUTS,
    ITERS,
    MAX_SOURCE_BYTES,
    N_CHECK_SETS,
    N_TIMING_SETS,
    PUBLIC_SEEDS,
    SET_BUDGET_BYTES,
    TEXT_CAP,
    TRACE_CAP,
    WARMUP,
    ChildKilled,
    InfrastructureError,
    MeasurementUntrusted,
)
from .speed import BASELINE_GUARD, BASELINE_GUARD_DEFAULT, SYSTEMATIC, SYSTEMATIC_DEFAULT
from .warm import WarmPool

__all__ = [
    "BASELINE_GUARD",
    "BASELINE_GUARD_DEFAULT",
    "BLOCK",
    "DEFAULT_TIMEOUTS",
    "HARNESS_VERSION",
    "ITERS",
    "MAX_SOURCE_BYTES",
    "N_CHECK_SETS",
    "N_TIMING_SETS",
    "PUBLIC_SEEDS",
    "SET_BUDGET_BYTES",
    "SYSTEMATIC",
    "SYSTEMATIC_DEFAULT",
    "TEXT_CAP",
    "TRACE_CAP",
    "WARMUP",
    "ChildKilled",
    "InfrastructureError",
    "MeasurementUntrusted",
    "Run",
    "WarmPool",
    "available_protections",
    "baseline_alone",
    "evaluate",
    "exported_baseline",
    "inputs_from_seed",
    "lower_for_platform",
    "measure_baseline",
    "probe_environment",
    "reference_hlo_cost",
    # the pieces the worker's pool, the CLI and the isolation tests use directly
    "evaluate_case",
    "new_timer_child",
    "platform_hint",
]
