"""Evaluation state. These rows are the truth for every job: the broker only carries wake-ups."""
from django.db import models
from django.urls import reverse

from evaluator.bench import record as record_terms


class HardwareTarget(models.Model):
    slug = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=120)
    platform = models.CharField(max_length=10)
    profile = models.CharField(max_length=10)
    peak_flops = models.FloatField(help_text="bf16 FLOP/s")
    peak_bandwidth = models.FloatField(help_text="bytes/s")
    last_worker_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug

    @property
    def queue(self) -> str:
        return f"eval.{self.slug}"

    @property
    def is_accelerator(self) -> bool:
        return self.platform != "cpu"


class Workload(models.Model):
    """Mirror of the registry in evaluator/bench/workloads, written only by sync_registry."""

    wid = models.CharField("ID", max_length=4, unique=True)
    number = models.PositiveSmallIntegerField(unique=True)
    slug = models.SlugField(max_length=80, unique=True)
    public_name = models.CharField(max_length=120)
    title = models.CharField(max_length=160)
    source = models.CharField(max_length=20)
    model = models.CharField(max_length=80)
    category = models.CharField(max_length=30)
    description = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    expert = models.BooleanField(default=False)
    kernelbench_id = models.PositiveSmallIntegerField(null=True, blank=True)
    degenerate = models.TextField(blank=True)
    atol = models.FloatField()
    rtol = models.FloatField()
    tolerance_reason = models.TextField(blank=True)
    public_file_note = models.TextField(
        blank=True, help_text="why the public suite's baseline.py cannot be uploaded unchanged, and what to change")
    input_names = models.JSONField(default=list)
    profiles = models.JSONField(default=dict)
    shapes = models.JSONField(default=dict, help_text="per profile: inputs and output shapes/dtypes")
    costs = models.JSONField(default=dict, help_text="per profile: flops and bytes")
    reference_source = models.TextField(blank=True)

    class Meta:
        ordering = ["number"]

    def __str__(self):
        return self.slug

    def get_absolute_url(self):
        return reverse("workload-detail", args=[self.slug])

    @property
    def registry_entry(self):
        from evaluator.bench import workloads
        return workloads.get(self.wid)


class Baseline(models.Model):
    """The XLA reference time for one workload on one target, per versions of JAX and harness."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="baselines")
    hardware = models.ForeignKey(HardwareTarget, on_delete=models.CASCADE, related_name="baselines")
    profile = models.CharField(max_length=10)
    jax_version = models.CharField(max_length=20)
    harness_version = models.CharField(max_length=20)
    median_s = models.FloatField()
    record = models.JSONField(default=dict)
    measured_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["workload", "hardware", "profile", "jax_version", "harness_version"],
            name="one_baseline_per_key")]
        ordering = ["workload__number"]


class ExpertReference(models.Model):
    """The best configuration of the hand-tuned expert kernel of a workload on a target."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="experts")
    hardware = models.ForeignKey(HardwareTarget, on_delete=models.CASCADE, related_name="experts")
    implementation = models.CharField(max_length=200)
    config = models.JSONField(default=dict)
    median_s = models.FloatField(null=True, blank=True)
    speedup = models.FloatField(null=True, blank=True)
    # the speedup's 95% interval; both null when swept before intervals existed
    speedup_lo = models.FloatField(null=True, blank=True)
    speedup_hi = models.FloatField(null=True, blank=True)
    outcome = models.CharField(max_length=20, blank=True)
    source = models.TextField(blank=True)
    record = models.JSONField(default=dict)
    jax_version = models.CharField(max_length=20, blank=True)
    harness_version = models.CharField(max_length=20, blank=True)
    configs_tried = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workload", "hardware"], name="one_expert_per_target")]
        ordering = ["workload__number"]

    @property
    def timed_before_intervals(self) -> bool:
        return self.outcome in record_terms.CORRECT_OUTCOMES and self.speedup is not None \
            and self.speedup_lo is None

    @property
    def speedup_text(self) -> str:
        return record_terms.format_speedup(self.speedup, self.speedup_lo, self.speedup_hi)


class ExpertSweepPoint(models.Model):
    """Every configuration an expert sweep tried, with its time and outcome."""

    expert = models.ForeignKey(ExpertReference, on_delete=models.CASCADE, related_name="sweep")
    config = models.JSONField(default=dict)
    outcome = models.CharField(max_length=20)
    median_s = models.FloatField(null=True, blank=True)
    speedup = models.FloatField(null=True, blank=True)
    speedup_lo = models.FloatField(null=True, blank=True)
    speedup_hi = models.FloatField(null=True, blank=True)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["expert", "id"]


class Evaluation(models.Model):
    PRECHECK = "precheck"
    MAIN = "main"
    STAGES = [(PRECHECK, "CPU pre-check"), (MAIN, "Evaluation")]

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"     # a pre-check stopped it before the accelerator stage
    FAILED = "failed"       # infrastructure failure after every retry
    STATES = [(QUEUED, "Queued"), (RUNNING, "Running"), (DONE, "Done"), (SKIPPED, "Stopped by pre-check"),
              (FAILED, "Infrastructure failure")]
    FINAL_STATES = (DONE, SKIPPED, FAILED)

    OUTCOMES = list(record_terms.OUTCOMES)
    CORRECT = record_terms.CORRECT_OUTCOMES

    # Indexes (issue 13: every index is written once per row of a 7,200-sample upload): the
    # candidate and the state are the leading columns of the unique (candidate, hardware, stage)
    # and the (state, hardware, stage) indexes, so they get none of their own; outcome and
    # code_sha256 get plain b-trees in Meta (db_index would add a LIKE index on PostgreSQL).
    candidate = models.ForeignKey("portal.Candidate", on_delete=models.CASCADE, related_name="evaluations",
                                  db_index=False)
    hardware = models.ForeignKey(HardwareTarget, on_delete=models.PROTECT, related_name="evaluations")
    stage = models.CharField(max_length=10, choices=STAGES, default=MAIN)
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
    worker = models.CharField(max_length=120, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["candidate", "hardware", "stage"],
                                               name="one_evaluation_per_stage")]
        indexes = [models.Index(fields=["state", "hardware", "stage"]),
                   models.Index(fields=["outcome"], name="evaluation_outcome_idx"),
                   models.Index(fields=["code_sha256"], name="evaluation_code_sha256_idx")]
        ordering = ["id"]

    def __str__(self):
        return f"evaluation {self.pk} ({self.stage}, {self.state})"

    @property
    def queue(self) -> str:
        return "precheck" if self.stage == self.PRECHECK else self.hardware.queue

    @property
    def is_correct(self) -> bool:
        return self.outcome in self.CORRECT

    @property
    def timed_before_intervals(self) -> bool:
        return self.is_correct and self.speedup is not None and self.speedup_lo is None

    @property
    def speedup_text(self) -> str:
        return record_terms.format_speedup(self.speedup, self.speedup_lo, self.speedup_hi)


class WorkerHeartbeat(models.Model):
    """Live workers, broker-independent: each worker process refreshes its row every few seconds."""

    name = models.CharField(max_length=160, unique=True)
    hostname = models.CharField(max_length=120)
    pid = models.PositiveIntegerField()
    hardware = models.CharField(max_length=40)
    queues = models.JSONField(default=list)
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-last_seen_at"]


class QueuePing(models.Model):
    """A round trip through one queue: proves that a live worker consumes it."""

    queue = models.CharField(max_length=60)
    sent_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    answered_by = models.CharField(max_length=160, blank=True)
