"""Leaderboard aggregates: what every page and export reads instead of scanning evaluations.

* ``WorkloadResult``: one per (submission, workload, hardware, source). It stores the
  ``metrics.WorkloadAggregate`` (JSON, ``to_dict``) with its scalars as indexed columns, the
  sample indices folded in (so a repeated refresh is idempotent), the timing interval of every
  record of the progression, and the workload's contribution curves (see ``aggregates``).
* ``SubmissionSummary``: one per (submission, hardware, source). Full-budget figures of every
  workload set as indexed columns (for SQL sorting), the set curves for every budget N (packed
  float64 arrays: see ``aggregates.pack_curves``), counts by outcome, tokens/cost, provenance and
  the JAX and harness versions folded; how many evaluations of earlier versions are kept apart.

``source`` is ``evaluated`` (the outcomes this portal measured) or ``reported`` (a trace's own
reported outcomes/speedups: self-reported, shown apart, never ranked with verified rows).
"""

from django.db import models

from jaxbench.metrics import WorkloadAggregate


class SubmissionSummary(models.Model):
    EVALUATED = "evaluated"
    REPORTED = "reported"
    SOURCES = [(EVALUATED, "Evaluated here"), (REPORTED, "Self-reported")]

    submission = models.ForeignKey("submissions.Submission", on_delete=models.CASCADE, related_name="summaries")
    hardware = models.ForeignKey(
        "catalog.HardwareTarget", on_delete=models.CASCADE, related_name="leaderboard_summaries"
    )
    source = models.CharField(max_length=10, choices=SOURCES, default=EVALUATED)
    mode = models.CharField(max_length=12, default="sequential")

    candidates_total = models.PositiveIntegerField(default=0)
    n_samples = models.PositiveIntegerField(default=0, help_text="samples folded in (final outcomes)")
    n_correct = models.PositiveIntegerField(default=0)
    complete = models.BooleanField(default=False, help_text="every candidate has its final outcome")
    counts = models.JSONField(default=dict, help_text="samples by outcome")
    per_sample_correctness = models.FloatField(null=True, blank=True, db_index=True)
    precheck_stopped = models.PositiveIntegerField(default=0)

    # Full-budget values per workload set (sortable in SQL).
    solved_all = models.FloatField(default=0)
    solved_production = models.FloatField(default=0)
    solved_kernelbench = models.FloatField(default=0)
    solved_expert = models.FloatField(default=0)
    solved_level2 = models.FloatField(default=0)
    geomean_all = models.FloatField(default=1.0, db_index=True)
    geomean_production = models.FloatField(default=1.0, db_index=True)
    geomean_kernelbench = models.FloatField(default=1.0, db_index=True)
    geomean_expert = models.FloatField(default=1.0, db_index=True)
    geomean_level2 = models.FloatField(default=1.0, db_index=True)
    fast_all = models.FloatField(default=0)
    fast_production = models.FloatField(default=0)
    fast_kernelbench = models.FloatField(default=0)
    fast_expert = models.FloatField(default=0)
    fast_level2 = models.FloatField(default=0)
    # Workloads of each set with at least one evaluated kernel (full budget): the public suite's
    # own score divides by these (metrics.upstream_score), ours by the whole set.
    attempted_all = models.PositiveIntegerField(default=0)
    attempted_production = models.PositiveIntegerField(default=0)
    attempted_kernelbench = models.PositiveIntegerField(default=0)
    attempted_expert = models.PositiveIntegerField(default=0)
    attempted_level2 = models.PositiveIntegerField(default=0)
    sets = models.JSONField(default=dict, help_text="per set: size, solved, geomean, low, high, fast")

    # Curves of every set for N = 1..curve_length (aggregates.pack_curves).
    curve_length = models.PositiveIntegerField(default=0)
    curves_all = models.BinaryField(default=b"")
    curves_production = models.BinaryField(default=b"")
    curves_kernelbench = models.BinaryField(default=b"")
    curves_expert = models.BinaryField(default=b"")
    curves_level2 = models.BinaryField(default=b"")
    best = models.JSONField(default=dict, help_text="workload wid -> best speedup (full budget)")
    # fast_p@N for p != 1 (not in the curves): every workload's lows, packed in one blob
    # (jaxbench.metrics.fast_lows; empty: not packed yet, the WorkloadResult aggregates answer)
    fast_lows = models.BinaryField(default=b"")

    tokens_total = models.BigIntegerField(null=True, blank=True)
    cost_total = models.FloatField(null=True, blank=True)
    jax_versions = models.JSONField(default=list)
    harness_versions = models.JSONField(default=list)
    # final evaluations of an earlier workload version or of an earlier harness on this target:
    # kept, never folded; the submission page lists them (leaderboard/versions.py) only when this
    # is > 0, and the boards' version filter recomputes only such summaries
    earlier_versions = models.PositiveIntegerField(default=0)
    # the earlier harness versions among those evaluations (the boards' version menu offers them)
    earlier_harness_versions = models.JSONField(default=list)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "hardware", "source"], name="one_summary_per_source")
        ]
        indexes = [models.Index(fields=["hardware", "source", "complete"])]
        ordering = ["-geomean_all", "submission_id"]

    @classmethod
    def shown(cls, submission) -> models.QuerySet:
        """What a submission's page shows: its summaries on its own hardware target (the
        evaluated one and, for a trace, the self-reported one)."""
        return cls.objects.filter(submission=submission, hardware_id=submission.hardware_id)

    def __str__(self):
        return f"summary of submission {self.submission_id} on {self.hardware_id} ({self.source})"

    @property
    def jax_version(self) -> str:
        return ", ".join(self.jax_versions)

    @property
    def harness_version(self) -> str:
        return ", ".join(self.harness_versions)

    @property
    def provenance(self) -> str:
        """``verified`` (every sample evaluated here), ``partial`` (evaluation in progress) or
        ``self-reported``."""
        if self.source == self.REPORTED:
            return "self-reported"
        return "verified" if self.complete else "partial"


class WorkloadResult(models.Model):
    summary = models.ForeignKey(SubmissionSummary, on_delete=models.CASCADE, related_name="workloads")
    submission = models.ForeignKey("submissions.Submission", on_delete=models.CASCADE, related_name="workload_results")
    workload = models.ForeignKey("catalog.Workload", on_delete=models.CASCADE, related_name="leaderboard_results")
    hardware = models.ForeignKey("catalog.HardwareTarget", on_delete=models.CASCADE, related_name="leaderboard_results")
    source = models.CharField(max_length=10, default=SubmissionSummary.EVALUATED)

    aggregate = models.JSONField(default=dict, help_text="metrics.WorkloadAggregate.to_dict()")
    n_samples = models.PositiveIntegerField(default=0)
    n_correct = models.PositiveIntegerField(default=0)
    n_faster = models.PositiveIntegerField(default=0)
    n_tie = models.PositiveIntegerField(default=0, help_text="correct samples within noise of XLA")
    best_speedup = models.FloatField(null=True, blank=True, db_index=True)
    best_index = models.PositiveIntegerField(null=True, blank=True)
    best_low = models.FloatField(null=True, blank=True)
    best_high = models.FloatField(null=True, blank=True)
    best_before_intervals = models.BooleanField(
        default=False,
        help_text="the best sample was timed before intervals existed: best_low/high are "
        "its timing spread, not a 95% interval, and a tie could not be told",
    )
    best_median_s = models.FloatField(null=True, blank=True, help_text="candidate time of the best sample")
    baseline_median_s = models.FloatField(null=True, blank=True)
    first_correct_index = models.PositiveIntegerField(null=True, blank=True)
    first_faster_index = models.PositiveIntegerField(null=True, blank=True)
    precheck_stopped = models.PositiveIntegerField(default=0)
    folded = models.JSONField(default=list, help_text="sample indices folded in")
    intervals = models.JSONField(
        default=dict, help_text="index -> [low, high, median_s, baseline median_s, measured] of progression records"
    )
    curves = models.BinaryField(default=b"")
    # The workload version whose evaluations this row folds: always the current one (earlier
    # versions' evaluations are kept, and shown on the submission page, but never folded).
    workload_version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "workload"], name="one_result_per_workload")]
        indexes = [models.Index(fields=["workload", "hardware", "source"])]
        ordering = ["workload__level", "workload__number"]

    def __str__(self):
        return f"{self.workload_id} of submission {self.submission_id} on {self.hardware_id}"

    @property
    def agg(self):
        return WorkloadAggregate.from_dict(self.aggregate) if self.aggregate else WorkloadAggregate()


class HighlightedSource(models.Model):
    """A kernel's syntax-highlighted HTML, keyed by the digest of its text (``Candidate.code_sha256``).

    Written by the worker when a kernel becomes one a submission page shows (a plain
    submission's kernels at intake, a trace's best sample of a workload when its evaluation is
    folded), so that no visitor's first view highlights up to 100 sources on the request (~4 ms
    per 64-line kernel: ~0.2-0.4 s a page). Content-addressed, so never stale; rows of another
    Pygments version are not read (``renderer``)."""

    code_sha256 = models.CharField(max_length=64, primary_key=True)
    renderer = models.CharField(max_length=40)
    html = models.TextField()
