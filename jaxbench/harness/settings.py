"""The harness's numbers (phase timeouts, iteration counts, input budget, caps) and its one
error: what every part of the harness shares."""

from __future__ import annotations

# the cap on a candidate's serialized program (jax.export), read by the trusted side and by the
# timer: one definition, the verifier's (the honest kernels' are 3-60 KB at the small profile)
from ..verdict.artifact import MAX_MODULE_BYTES as MAX_ARTIFACT_BYTES  # noqa: F401 - re-exported

DEFAULT_TIMEOUTS = {"startup": 120.0, "compile": 180.0, "check": 180.0, "timing": 300.0, "export": 120.0}
WARMUP = 5
ITERS = 50
BLOCK = 5  # candidate and baseline alternate in blocks of this many calls (ABBA order)
N_CHECK_SETS = 3
N_TIMING_SETS = 3
SET_BUDGET_BYTES = 8 << 30  # all input sets of one evaluation together
MAX_SOURCE_BYTES = 1 << 20
TRACE_CAP = 128 << 20  # = profiling.xplane.MAX_FILE_BYTES (the figures behind it are there)
TEXT_CAP = 4 << 20
PUBLIC_SEEDS = (0, 1)  # fixed keys a memorising candidate would have used


class InfrastructureError(RuntimeError):
    """The harness could not evaluate (not the candidate's fault); retry later."""


# signals a process does not get from its own code or its own limits: someone outside killed it
# (the host's OOM killer, an operator, a dying machine). The harness's own kills (timeouts) and
# the child's own limits (its cgroup's memory, RLIMIT_CPU's SIGXCPU) are told apart before this.
EXTERNAL_SIGNALS = ("SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")


class ChildKilled(InfrastructureError):
    """The child died of a signal the harness did not send: an infrastructure failure, retried on
    a fresh child; only the same death again becomes the candidate's (the worker decides)."""

    def __init__(self, phase: str, signal: str, detail: str = ""):
        self.death = {"phase": phase, "signal": signal}
        super().__init__(
            f"the child died of {signal} during {phase}, a signal the harness did not send"
            + (f"\n{detail}" if detail else "")
        )
