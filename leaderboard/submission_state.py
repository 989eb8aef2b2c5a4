"""A submission's state, one word every list and page shows alike (pure, Django-free).

From its evaluation counts, a submission is:

* ``queued``: nothing finished and nothing running yet;
* ``running``: some candidates finished or running, not all (with its progress);
* ``failed``: every candidate finished and none is correct (compile errors, wrong answers,
  timeouts, rejections, infrastructure failures);
* ``partial``: every candidate finished, some correct and some failed;
* ``held``: every candidate finished and at least one correct result is held for review
  (TRUST.md 6): it is not ranked until a staff member accepts it;
* ``measured``: every candidate finished and every one is correct.

Only ``measured`` is green; a failure is never shown as done. ``reason`` says why in one line
(the count of each failing outcome, then the first failure), for the page a click away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from jaxbench.record import CORRECT_OUTCOMES, OUTCOME_LABELS
from jaxbench.verdict.review import HELD_OUTCOME

QUEUED, RUNNING, FAILED, PARTIAL, HELD, MEASURED = "queued", "running", "failed", "partial", "held", "measured"
STATES: tuple[str, ...] = (QUEUED, RUNNING, FAILED, PARTIAL, HELD, MEASURED)
# the badge class of each state (static/css/portal.css): only a measured submission is green
BADGES = {QUEUED: "", RUNNING: "", FAILED: "bad", PARTIAL: "warn", HELD: "held_for_review", MEASURED: "ok"}
LABELS = {
    QUEUED: "queued",
    RUNNING: "running",
    FAILED: "failed",
    PARTIAL: "partial",
    HELD: "held for review",
    MEASURED: "measured",
}
# a final row with no outcome: the worker gave up after every retry
INFRASTRUCTURE = "infrastructure_failure"
# who reviews a held result (leaderboard/views/review.py: staff only)
REVIEWERS = "the portal's staff"


def outcome_label(outcome: str) -> str:
    if outcome == INFRASTRUCTURE:
        return "infrastructure failure"
    if outcome == HELD_OUTCOME:
        return "held for review"
    return OUTCOME_LABELS.get(outcome, outcome)


@dataclass(frozen=True)
class FirstFailure:
    """The first failed sample in workload and sample order."""

    wid: str
    index: int
    outcome: str
    message: str = ""

    def text(self) -> str:
        head = (self.message or "").strip().splitlines()[0][:200] if (self.message or "").strip() else ""
        return f"{self.wid} sample {self.index}: {outcome_label(self.outcome)}" + (f": {head}" if head else "")


@dataclass(frozen=True)
class State:
    key: str
    total: int
    done: int
    n_correct: int
    n_held: int
    failures: dict[str, int] = field(default_factory=dict)  # failing outcome -> count, most first
    first_failure: FirstFailure | None = None

    @property
    def label(self) -> str:
        if self.key in (QUEUED, RUNNING):
            return f"{LABELS[self.key]} {self.done}/{self.total}"
        return LABELS[self.key]

    @property
    def badge(self) -> str:
        return BADGES[self.key]

    @property
    def n_failed(self) -> int:
        return sum(self.failures.values())

    @property
    def finished(self) -> bool:
        return self.key not in (QUEUED, RUNNING)

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100

    @property
    def any_correct(self) -> bool:
        """Whether anything measured here is correct (held results included: they were)."""
        return bool(self.n_correct or self.n_held)

    def as_dict(self) -> dict:
        """As exports and the API's status show it."""
        return {
            "state": self.key,
            "label": self.label,
            "total": self.total,
            "done": self.done,
            "correct": self.n_correct,
            "held": self.n_held,
            "failed": dict(self.failures),
            "reason": self.reason,
        }

    def failure_counts(self) -> str:
        """``2 compile error, 1 incorrect``: the failing outcomes, most frequent first."""
        return ", ".join(f"{n} {outcome_label(o)}" for o, n in self.failures.items())

    @property
    def reason(self) -> str:
        """Why it is in this state, in one line."""
        parts = []
        if self.key == MEASURED:
            return f"all {self.n_correct} correct"
        if self.key in (QUEUED, RUNNING):
            if self.n_correct:
                parts.append(f"{self.n_correct} correct so far")
        elif self.n_correct:
            parts.append(f"{self.n_correct} correct")
        if self.n_held:
            parts.append(f"{self.n_held} held for review")
        if self.failures:
            parts.append(("failed so far: " if self.key in (QUEUED, RUNNING) else "failed: ") + self.failure_counts())
        if self.key == FAILED and not self.failures:
            parts.append("no correct result")
        text = "; ".join(parts)
        if self.first_failure is not None:
            text += f" (first: {self.first_failure.text()})"
        return text


def submission_state(
    total: int,
    done: int,
    outcomes: Mapping[str, int],
    *,
    running: int = 0,
    first_failure: FirstFailure | None = None,
) -> State:
    """The state of a submission with ``total`` candidates of which ``done`` have their final
    verdict, ``outcomes`` those verdicts counted by the outcome a public view shows
    (``held_for_review`` for a held one, :data:`INFRASTRUCTURE` or ``""`` for a row that failed
    without one) and ``running`` rows being evaluated now."""
    n_correct = n_held = 0
    failures: dict[str, int] = {}
    for outcome, n in outcomes.items():
        if not n:
            continue
        if outcome in CORRECT_OUTCOMES:
            n_correct += n
        elif outcome == HELD_OUTCOME:
            n_held += n
        else:
            key = outcome or INFRASTRUCTURE
            failures[key] = failures.get(key, 0) + n
    failures = dict(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0])))
    if total <= 0 or done < total:
        key = RUNNING if (done or running) else QUEUED
    elif n_held:
        key = HELD
    elif not n_correct:
        key = FAILED
    elif failures:
        key = PARTIAL
    else:
        key = MEASURED
    return State(
        key=key,
        total=max(total, 0),
        done=min(done, total) if total > 0 else done,
        n_correct=n_correct,
        n_held=n_held,
        failures=failures,
        first_failure=first_failure if failures else None,
    )


def held_sentence(measured: str, reasons: list[str] | tuple[str, ...]) -> str:
    """What a held result says: what was measured, that it waits for review, who reviews it and
    what happens next. ``measured``: e.g. ``correct, 3.20x [2.90, 3.50]`` (only where the viewer
    may see the speed) or ``correct``."""
    because = "; ".join(r for r in reasons if r) or "the harness held it"
    return (
        f"measured: {measured}; held for review by {REVIEWERS} (the reviewers) because {because}; "
        "it joins the board once a reviewer accepts it (a rejected one counts as rejected)"
    )


def state_from_progress(progress: Mapping, first_failure: FirstFailure | None = None) -> State:
    """The state from ``evaluator.progress.submission_progress``'s dict (or the page's
    ``progress_for``), which a submission's page has already read: no query more."""
    running = sum(int(states.get("running", 0)) for states in (progress.get("stages") or {}).values())
    return submission_state(
        int(progress.get("total") or 0),
        int(progress.get("done") or 0),
        progress.get("outcomes") or {},
        running=running,
        first_failure=first_failure,
    )
