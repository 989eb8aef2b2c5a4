"""How a phase that did not give its reply ends an evaluation (trusted side): the record's
outcome, category and message, then :class:`Stop`. A child that timed out, crashed or exited is
judged here; a child killed from outside is no verdict (:class:`ChildKilled`)."""

from __future__ import annotations

from typing import Any, NoReturn, Protocol

from ..record import Outcome, trim
from ..verdict import rules as verdict
from .settings import EXTERNAL_SIGNALS, ChildKilled

Record = dict[str, Any]


class Stop(Exception):
    """Ends an evaluation with an outcome already written into the record."""


class StuckChild(Protocol):
    """What judging a timeout needs of a child (a SandboxedChild, or a test's stand-in)."""

    def dump_stacks(self) -> str: ...

    def at_memory_limit(self) -> bool: ...

    def kill(self) -> None: ...


def finish(rec: Record, outcome: str, category: str | None, message: str) -> NoReturn:
    rec["outcome"], rec["error_category"], rec["message"] = outcome, category, trim(message)
    raise Stop()


PHASE_WORDS = {
    "compile": "compile (import, trace, lower, compile)",
    "check": "the correctness runs",
    "timing": "the timing runs",
    "export": "lowering",
    "load": "reading the exported program",
}


def timed_out(rec: Record, child: StuckChild, phase: str, limit: float, cpu: bool = False) -> NoReturn:
    """A phase ran out of time (``cpu``: its CPU-time limit): take the child's stacks (where it
    was stuck), then kill it. The compile side's overrun is the candidate's compile_error
    (``verdict.timeout_verdict``); a child at its memory limit is out of memory either way."""
    stacks = ""
    try:
        stacks = child.dump_stacks()
    except Exception:  # noqa: BLE001 - diagnostics only
        pass
    # read before the kill empties the cgroup: a child that ran into its memory limit is out of
    # memory, whether the kernel had OOM-killed it yet or it was still thrashing (how long that
    # lasts depends on the machine's load, so it must not decide between oom and timeout)
    out_of_memory = child.at_memory_limit()
    child.kill()
    where = [line.strip() for line in stacks.splitlines() if "candidate.py" in line][:3]
    msg = f"{PHASE_WORDS.get(phase, phase)} exceeded {limit:g} s" + (" of CPU time" if cpu else "")
    if where:
        msg += "\n  stuck at " + "\n  stuck at ".join(where)
    rec["notes"].append("stacks at timeout: " + trim(stacks, 3000) if stacks else "no stacks at timeout")
    if out_of_memory:
        finish(
            rec,
            Outcome.RUNTIME_ERROR,
            "oom",
            f"the child ran out of memory during {phase}: it was at its memory limit when {msg}",
        )
    finish(rec, *verdict.timeout_verdict(phase), msg)


class ExitedChild(Protocol):
    def wait_exit(self, timeout: float = 5.0) -> tuple[int | None, str | None, bool]: ...

    def stderr_tail(self) -> str: ...


def crashed(rec: Record, child: ExitedChild, phase: str) -> NoReturn:
    """The child is gone mid-phase: out of memory, a crash, an exit; or killed from outside
    (``ChildKilled``: retried by the worker, never the candidate's at once)."""
    rc, sig, oom = child.wait_exit(5.0)
    tail = "\n".join(child.stderr_tail().strip().splitlines()[-8:])
    if oom:
        finish(rec, Outcome.RUNTIME_ERROR, "oom", f"the child was killed by the memory limit during {phase}")
    if sig in EXTERNAL_SIGNALS:
        raise ChildKilled(phase, sig or "", tail)
    if sig:
        finish(rec, Outcome.RUNTIME_ERROR, "crash", f"the child died of {sig} during {phase}\n{tail}")
    finish(rec, Outcome.RUNTIME_ERROR, "exit", f"the child exited (status {rc}) during {phase}\n{tail}")
