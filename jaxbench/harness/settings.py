"""The harness's numbers (phase timeouts, iteration counts, input budget, caps) and its one
error: what every part of the harness shares."""

from __future__ import annotations

from typing import Any

# the cap on a candidate's serialized program (jax.export), read by the trusted side and by the
# timer: one definition, the verifier's (the honest kernels' are 3-51 KB at the small profile, at
# most 478 KB at the full one; the figures are there, with its cap on operations)
from ..verdict.artifact import MAX_MODULE_BYTES as MAX_ARTIFACT_BYTES  # noqa: F401 - re-exported

# Per-phase limits, s: wall clock, except "compile" and "export" (and on the cpu target "check"
# and "timing"), which are the child's CPU seconds (below). "compile" bounds each of the three
# waits on the compile side of an evaluation: the export child's import, trace and lowering, the
# timer's reading of the artifact and its compilation; "export" the pre-check's lowering at the
# full profile (accelerator targets). Their overrun is the candidate's compile_error
# (compile_timeout, verdict/rules.py timeout_verdict), never retried, so a small upload buys at
# most 3 x 15 s of compiling plus the children's ~2-3 s:
# under 60 s of worker time (benchmarks/compile_bomb.py: 1 MB and smaller bombs end in 2-25 s), and
# a pre-check at most 10 + 10 + 15 + 15 s (its lowering, then the small profile's export again).
# Honest kernels need a fifth of that at most: on a 2-core CPU host, export (Tokamax's import
# included) <= 3 s, reading < 1 s, XLA:CPU compile <= 1.4 s at the small profile (expert 6p, the
# largest); lowering for a TPU at the full profile <= 0.8 s (+ the import); on an H200 the timer
# compiled the Triton examples in 0.11-0.73 s at the small profile (docs/DESIGN.md). A deployment
# whose full-profile compiles need more (none was measured on a TPU) raises "compile"
# (JAXBENCH_TIMEOUTS) and the bound with it: 3 x compile + ~3 s.
# "compile" and "export" are CPU seconds of the child (harness/run.py Run.recv_within_cpu): the
# candidate's compile cost, which the machine's load barely moves. So are "check" and "timing"
# where the program runs on the host's CPU (the cpu target): there the candidate's run is CPU
# work, and a wall limit let a busy neighbour decide between a verdict and a timeout (the trace
# bomb's correctness runs passed 60 s of wall time beside a busy loop, not quiet). On an
# accelerator the device does the work, one timer per device (its lock), and a device-bound run
# uses little host CPU, so those two stay wall-clock limits. A child the machine starves of its
# CPU budget for CPU_WALL_SLACK times as long in wall time is retried as infrastructure.
CPU_WALL_SLACK = 8.0
CPU_TIME_PHASES = ("compile", "export")
CPU_TIME_PHASES_ON_HOST = ("check", "timing")  # + the above, on the cpu target


def cpu_time_limited(phase: str, platform: str) -> bool:
    """Whether ``phase``'s limit (a key of DEFAULT_TIMEOUTS) counts the child's CPU seconds on
    a timer of ``platform``, rather than wall seconds."""
    return phase in CPU_TIME_PHASES or (platform == "cpu" and phase in CPU_TIME_PHASES_ON_HOST)


DEFAULT_TIMEOUTS = {"startup": 120.0, "compile": 15.0, "check": 180.0, "timing": 300.0, "export": 10.0}
WARMUP = 5
ITERS = 50
BLOCK = 5  # candidate and baseline alternate in blocks of this many calls (ABBA order)
# Adaptive sampling (harness/run.py Run.time, the stop rule verdict.numerics.keep_sampling): a
# candidate is timed beside its baseline in rounds of ITERS calls each until the sampling part of
# the speedup's interval is as narrow as the platform's target (relative half-width; the
# systematic part, speed.SYSTEMATIC, is added after and no sampling narrows it), MAX_TIMING_ROUNDS
# rounds are timed, or another round would end past the platform's budget of timing wall seconds.
RESOLUTION_TARGET = {"cpu": 0.05}
RESOLUTION_TARGET_DEFAULT = 0.02  # accelerators
MAX_TIMING_ROUNDS = 6
# At least this many rounds, whatever the width or the budget: a shared host's speed drifts
# between rounds and changes two programs' ratio (paired_speedup's two-stage bootstrap over
# rounds shows it only with several); on the CPU target per-round ratios of one quiet run
# spread by up to +-20% (1p's example kernel).
MIN_TIMING_ROUNDS = {"cpu": 3}
MIN_TIMING_ROUNDS_DEFAULT = 2
TIMING_BUDGET_S = {"cpu": 30.0}
TIMING_BUDGET_S_DEFAULT = 20.0
N_CHECK_SETS = 3
N_TIMING_SETS = 3
SET_BUDGET_BYTES = 8 << 30  # all input sets of one evaluation together
MAX_SOURCE_BYTES = 1 << 20
TRACE_CAP = 128 << 20  # = profiling.xplane.MAX_FILE_BYTES (the figures behind it are there)
TEXT_CAP = 4 << 20
PUBLIC_SEEDS = (0, 1)  # fixed keys a memorising candidate would have used


class InfrastructureError(RuntimeError):
    """The harness could not evaluate (not the candidate's fault); retry later."""


class MeasurementUntrusted(InfrastructureError):
    """The machine's load made a measurement untrustworthy (a starved compile or trace parser,
    a baseline that ran far slower beside the candidate than alone, twice): never the
    candidate's verdict. ``harness.evaluate`` times the case again on fresh children after a
    pause (LOAD_RETRY_WAITS_S); past those, the worker's own retry takes over."""

    # how the worker tells it apart without importing the harness (evaluator/runner.py)
    load_spoiled = True


# pauses before each re-timing of a case whose measurement the load spoiled (then the caller's
# retry: the worker's backoff); each attempt's reason is kept in the record's ``load_retries``
LOAD_RETRY_WAITS_S = (2.0, 10.0)


# signals a process does not get from its own code or its own limits: someone outside killed it
# (the host's OOM killer, an operator, a dying machine). The harness's own kills (timeouts) and
# the child's own limits (its cgroup's memory, RLIMIT_CPU's SIGXCPU) are told apart before this.
EXTERNAL_SIGNALS = ("SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")


class ChildKilled(InfrastructureError):
    """The child died of a signal the harness did not send: an infrastructure failure, retried on
    a fresh child; only the same death again becomes the candidate's (the worker decides)."""

    def __init__(self, phase: str, signal: str, detail: str = ""):
        self.death = {"phase": phase, "signal": signal}
        # the harness's record of the attempt up to the death (its sandbox, seeds, versions,
        # phases, the children's output): what the worker's verdict on a second such death keeps
        self.record: dict[str, Any] | None = None
        super().__init__(
            f"the child died of {signal} during {phase}, a signal the harness did not send"
            + (f"\n{detail}" if detail else "")
        )
