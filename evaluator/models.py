"""Evaluation state. These rows are the truth for every job: the broker only carries wake-ups."""

from django.conf import settings
from django.db import models

import jaxbench
from catalog.models import HardwareTarget
from evaluator.queues import BACKGROUND_LANE, USER_LANE, stage_queue
from jaxbench import record as record_terms
from jaxbench.verdict import review as review_rules


def current_harness_version() -> str:
    """The harness version this code base runs (``jaxbench.HARNESS_VERSION``): a new row's, and
    the only one the boards count. Read at each call (a test may stand in a bump); a callable
    default, so a harness bump needs no migration."""
    return jaxbench.HARNESS_VERSION


def current_versions() -> models.Q:
    """The evaluation rows the boards count: those of their workload's current version measured
    under the current harness. Every other final row is kept, listed apart and re-scorable,
    never folded."""
    return models.Q(
        workload_version=models.F("candidate__workload__version"), harness_version=current_harness_version()
    )


def is_current(workload_version: int, current_workload_version: int, harness_version: str) -> bool:
    """``current_versions`` for one row already in memory."""
    return workload_version == current_workload_version and harness_version == current_harness_version()


class Evaluation(models.Model):
    PRECHECK = "precheck"
    MAIN = "main"
    STAGES = [(PRECHECK, "CPU pre-check"), (MAIN, "Evaluation")]

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"  # a pre-check stopped it before the accelerator stage
    FAILED = "failed"  # infrastructure failure after every retry
    STATES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (DONE, "Done"),
        (SKIPPED, "Stopped by pre-check"),
        (FAILED, "Infrastructure failure"),
    ]
    FINAL_STATES = (DONE, SKIPPED, FAILED)

    OUTCOMES = list(record_terms.OUTCOMES)
    CORRECT = record_terms.CORRECT_OUTCOMES

    # Indexes (issue 13: every index is written once per row of a 7,200-sample upload): the
    # candidate and the state are the leading columns of the unique (candidate, hardware, stage)
    # and the (state, hardware, stage, lane) indexes, so they get none of their own; outcome and
    # code_sha256 get plain b-trees in Meta (db_index would add a LIKE index on PostgreSQL).
    candidate = models.ForeignKey(
        "submissions.Candidate", on_delete=models.CASCADE, related_name="evaluations", db_index=False
    )
    # No index of its own either: with statistics taken before a target's first rows (a new
    # target; autoanalyze waits for 10% of the table) PostgreSQL estimated one row for it and
    # walked every row of the target through this index for the queue's few running rows (49
    # ms); the queue index below serves the queue, the unique index a candidate's rows.
    hardware = models.ForeignKey(HardwareTarget, on_delete=models.PROTECT, related_name="evaluations", db_index=False)
    stage = models.CharField(max_length=10, choices=STAGES, default=MAIN)
    # user submissions, or demo and maintenance work that runs only when no user's waits
    # (evaluator/queues.py: the lane picks the queue and the actor's priority)
    lane = models.CharField(
        max_length=10, choices=[(USER_LANE, "User"), (BACKGROUND_LANE, "Background")], default=USER_LANE
    )
    state = models.CharField(max_length=10, choices=STATES, default=QUEUED)
    outcome = models.CharField(max_length=20, blank=True)
    speedup = models.FloatField(null=True, blank=True)
    # the speedup's 95% interval; both null on a correct row timed before intervals existed
    speedup_lo = models.FloatField(null=True, blank=True)
    speedup_hi = models.FloatField(null=True, blank=True)
    message = models.TextField(blank=True)
    record = models.JSONField(default=dict, blank=True)
    code_sha256 = models.CharField(max_length=64)
    reused_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    attempts = models.PositiveSmallIntegerField(default=0)
    # infrastructure failures of earlier attempts (a child killed from outside, ...): a retry that
    # dies the same way again makes it the candidate's own death, with every attempt recorded
    failures = models.JSONField(default=list, blank=True)
    worker = models.CharField(max_length=120, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # Held means held (TRUST.md 6, jaxbench.verdict.review): the review state, set from the
    # record when the verdict is stored ("held" when the harness held a correct result), then
    # by a staff member on the review page ("accepted" / "rejected"), audited here and in
    # record["review"].
    REVIEW_NONE, HELD, ACCEPTED, REJECTED = review_rules.STATES
    REVIEW_STATES = [
        (REVIEW_NONE, "Not held"),
        (HELD, "Held for review"),
        (ACCEPTED, "Accepted on review"),
        (REJECTED, "Rejected on review"),
    ]
    review = models.CharField(max_length=10, choices=REVIEW_STATES, default=REVIEW_NONE, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True)
    # The workload version this row evaluates (jaxbench/workloads/versions.py): set from the
    # catalogue when the row is created and checked against the worker's registry when claimed.
    # A re-score of a later version is a new row; rows from before versions existed carry the
    # version current at the migration, marked assumed.
    workload_version = models.PositiveIntegerField(default=1)
    workload_version_assumed = models.BooleanField(default=False)
    # The harness version this row is measured under (jaxbench.HARNESS_VERSION, the exact string):
    # the scheduling process's when the row is created, checked against the worker's when claimed
    # (the record the worker stores names the same). A re-score under a later harness is a new
    # row; rows from before this column took the version their record names, or, when it names
    # none, the one current at the migration, marked assumed.
    harness_version = models.CharField(max_length=20, default=current_harness_version)
    harness_version_assumed = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["candidate", "hardware", "stage", "workload_version", "harness_version"],
                name="one_evaluation_per_stage_version",
            )
        ]
        indexes = [
            # the queue's rows by state; lane too, so that counting a queue's waiting and running
            # rows (the health page, the reconciler) reads the index alone, not each row:
            # 21,600 queued rows after three 7,200-sample uploads cost the page ~0.1 s
            # and the id, so that the rows ahead of a queued row (id below its own) are a range
            # of the index, not every queued row of the queue read and filtered
            models.Index(fields=["state", "hardware", "stage", "lane", "id"], name="evaluation_queue_idx"),
            models.Index(fields=["outcome"], name="evaluation_outcome_idx"),
            models.Index(fields=["code_sha256"], name="evaluation_code_sha256_idx"),
            # only the held rows: the review page's list, at no cost to the other rows' inserts
            models.Index(fields=["id"], name="evaluation_held_idx", condition=models.Q(review="held")),
            # only the reviewed rows: the review page's recent decisions
            models.Index(
                fields=["reviewed_at"], name="evaluation_reviewed_idx", condition=models.Q(reviewed_at__isnull=False)
            ),
        ]
        ordering = ["id"]

    def __str__(self):
        return f"evaluation {self.pk} ({self.stage}, {self.state})"

    @property
    def queue(self) -> str:
        return stage_queue(self.stage, self.hardware.slug, self.lane)

    @property
    def is_correct(self) -> bool:
        return self.outcome in self.CORRECT

    @property
    def timed_before_intervals(self) -> bool:
        return self.is_correct and self.speedup is not None and self.speedup_lo is None

    @property
    def speedup_text(self) -> str:
        return record_terms.format_speedup(self.speedup, self.speedup_lo, self.speedup_hi)

    @property
    def is_held(self) -> bool:
        return review_rules.is_held(self.review)

    @property
    def counts_for_ranking(self) -> bool:
        return review_rules.counts_for_ranking(self.review)

    @property
    def shown_outcome(self) -> str:
        """The outcome public views show: ``held_for_review`` while held."""
        return review_rules.shown_outcome(self.outcome, self.review)

    @property
    def held_reasons(self) -> list[str]:
        return review_rules.reasons(self.record)


class WorkerHeartbeat(models.Model):
    """Live workers, broker-independent: each worker process refreshes its row every few seconds."""

    name = models.CharField(max_length=160, unique=True)
    hostname = models.CharField(max_length=120)
    pid = models.PositiveIntegerField()
    hardware = models.CharField(max_length=40)
    queues = models.JSONField(default=list)
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField(db_index=True)
    # JAX backends the worker process itself has initialized: at most the trusted side's pinned
    # CPU client; an accelerator here would lock the device away from the children that run on it
    backends = models.JSONField(default=list, blank=True)
    # what its threads run now: [{"actor", "args", "queue", "started_at"}] (evaluations and the
    # work that has no Evaluation row, such as an expert sweep), written with the next beat
    tasks = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-last_seen_at"]


class QueuePing(models.Model):
    """A round trip through one queue: proves that a live worker consumes it."""

    queue = models.CharField(max_length=60)
    sent_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    answered_by = models.CharField(max_length=160, blank=True)


class WorkloadDuration(models.Model):
    """How long one evaluation of a workload takes on a hardware target, at a stage: the last
    ``KEEP`` measured durations (claim to verdict, reused verdicts excluded), so a queue's wait
    is estimated from a median read in one query (evaluator/queue_status.py)."""

    KEEP = 25

    hardware = models.ForeignKey(HardwareTarget, on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey("catalog.Workload", on_delete=models.CASCADE, related_name="+")
    stage = models.CharField(max_length=10, choices=Evaluation.STAGES)
    recent = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hardware", "workload", "stage"], name="one_duration_per_workload_stage")
        ]
