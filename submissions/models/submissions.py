import hashlib

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from jaxbench.limits import META_LIMITS
from jaxbench.traces import SELECTION_LABELS, UNDECLARED


def code_digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


class SubmissionQuerySet(models.QuerySet):
    def public(self):
        return self.filter(published_at__isnull=False, withdrawn_at__isnull=True)

    def visible_to(self, user):
        """Published submissions, plus the user's own teams' (all of them for staff)."""
        if user.is_authenticated and user.is_staff:
            return self
        public = models.Q(published_at__isnull=False, withdrawn_at__isnull=True)
        if not user.is_authenticated:
            return self.filter(public)  # no join, so no DISTINCT: the public pages' common case
        return self.filter(public | models.Q(team__memberships__user=user)).distinct()


class SubmissionManager(models.Manager.from_queryset(SubmissionQuerySet)):
    """``Submission.objects``: every submission except test runs. A test run is its owner's alone,
    so the default manager never returns one: every page, list, API, export, aggregate query and
    cache built on it is blind to test runs by construction (docs/DESIGN.md, "Test runs"). Related
    objects (``candidate.submission``) and cascades use the unfiltered base manager."""

    def get_queryset(self):
        return super().get_queryset().filter(test_run=False)


class TestRunQuerySet(models.QuerySet):
    def owned_by(self, user):
        """The test runs ``user`` made that have not expired: the only way to one of them."""
        if user is None or not user.is_authenticated:
            return self.none()
        return self.filter(created_by=user, expires_at__gt=timezone.now())

    def expired(self, now=None):
        return self.filter(expires_at__lte=now or timezone.now())


class TestRunManager(models.Manager.from_queryset(TestRunQuerySet)):
    """``Submission.test_runs``: only test runs (private evaluations, deleted when they expire)."""

    def get_queryset(self):
        return super().get_queryset().filter(test_run=True)


class Submission(models.Model):
    KERNELS = "kernels"
    TRACE = "trace"
    KINDS = [(KERNELS, "Kernel files"), (TRACE, "Agent trace")]
    SEQUENTIAL = "sequential"
    INDEPENDENT = "independent"
    SAMPLING = [(SEQUENTIAL, "Sequential search"), (INDEPENDENT, "Independent samples (best-of-N)")]

    team = models.ForeignKey("submissions.Team", on_delete=models.PROTECT, related_name="submissions")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="submissions"
    )
    hardware = models.ForeignKey("catalog.HardwareTarget", on_delete=models.PROTECT, related_name="submissions")
    kind = models.CharField(max_length=10, choices=KINDS)
    method = models.CharField(max_length=META_LIMITS["method"])
    model_name = models.CharField(max_length=META_LIMITS["model_name"], blank=True)
    framework = models.CharField(max_length=META_LIMITS["framework"], blank=True)
    # checked by forms and the intake (a TextField's max_length is not a column width)
    description = models.TextField(blank=True, max_length=META_LIMITS["description"])
    link = models.URLField(blank=True, max_length=META_LIMITS["link"])
    sampling = models.CharField(max_length=12, choices=SAMPLING, default=SEQUENTIAL)
    # how the samples were chosen (jaxbench.traces.SELECTIONS), as the upload declared it;
    # "undeclared" when it did not (every entry made before the declaration existed)
    selection = models.CharField(max_length=16, choices=list(SELECTION_LABELS.items()), default=UNDECLARED)
    selector = models.CharField(max_length=META_LIMITS["selector"], blank=True)
    budget = models.PositiveIntegerField(null=True, blank=True)
    trace_settings = models.JSONField(default=dict, blank=True)
    upload_key = models.CharField(max_length=META_LIMITS["upload_key"], null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    # A test run: a private evaluation that only its creator sees, never published, deleted at
    # ``expires_at`` unless promoted to a submission (docs/DESIGN.md, "Test runs").
    test_run = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)

    # the first manager is the default one: it leaves test runs out
    objects = SubmissionManager()
    test_runs = TestRunManager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["team", "upload_key"], name="one_upload_per_key")]
        indexes = [
            models.Index(fields=["hardware", "published_at"]),
            # the reconciler's expiry sweep, over the test runs only
            models.Index(fields=["expires_at"], name="test_run_expiry_idx", condition=models.Q(test_run=True)),
        ]

    def __str__(self):
        return f"#{self.pk} {self.method} ({self.team})"

    def get_absolute_url(self):
        return reverse("leaderboard:submission-detail", args=[self.pk])

    @property
    def is_public(self) -> bool:
        return self.published_at is not None and self.withdrawn_at is None

    def publish(self):
        if self.test_run:
            raise ValueError("a test run is never published: promote it to a submission first")
        self.published_at = timezone.now()
        self.withdrawn_at = None
        self.save(update_fields=["published_at", "withdrawn_at"])

    def withdraw(self):
        self.withdrawn_at = timezone.now()
        self.save(update_fields=["withdrawn_at"])


def meta_limit(field: str) -> int:
    """The longest value a submission's metadata field takes (jaxbench.limits.META_LIMITS, also
    the model's column widths): the form, the API serializer and the intake read it here."""
    return META_LIMITS[field]


META_FIELDS = ("method", "model_name", "framework", "description", "link", "selector", "upload_key")


class Candidate(models.Model):
    """One kernel source for one workload: a file of a kernel submission or a trace sample."""

    # (the submission leads the unique (submission, workload, index) index: no index of its own)
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="candidates", db_index=False)
    workload = models.ForeignKey("catalog.Workload", on_delete=models.PROTECT, related_name="candidates")
    index = models.PositiveIntegerField(default=0)
    round = models.PositiveIntegerField(null=True, blank=True)
    parent_index = models.PositiveIntegerField(null=True, blank=True)
    filename = models.CharField(max_length=200, blank=True)
    code = models.TextField()
    code_sha256 = models.CharField(max_length=64)
    reported_outcome = models.CharField(max_length=20, blank=True)
    reported_speedup = models.FloatField(null=True, blank=True)
    # the agent's own 95% interval of its speedup (optional in the trace format)
    reported_speedup_lo = models.FloatField(null=True, blank=True)
    reported_speedup_hi = models.FloatField(null=True, blank=True)
    tokens_in = models.PositiveBigIntegerField(null=True, blank=True)
    tokens_out = models.PositiveBigIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    # A kernel found in an ATIF or ADK trajectory (jaxbench.traces.trajectory): the step that
    # produced it ("step 4 (steps[3].tool_calls[0])"), its time, and the agent's self-reported
    # usage of every step up to and including it (tokens_in/tokens_out/cost_usd above: since
    # the previous kernel). Empty for kernel files and jaxbench-trace/1 samples.
    step_ref = models.CharField(max_length=200, blank=True)
    step_at = models.DateTimeField(null=True, blank=True)
    cum_tokens_in = models.PositiveBigIntegerField(null=True, blank=True)
    cum_tokens_out = models.PositiveBigIntegerField(null=True, blank=True)
    cum_cost_usd = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["submission", "workload__level", "workload__number", "index"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "workload", "index"], name="one_candidate_per_index")
        ]
        indexes = [models.Index(fields=["code_sha256"], name="candidate_code_sha256_idx")]

    def __str__(self):
        return f"{self.workload_id}#{self.index} of submission {self.submission_id}"

    def save(self, *args, **kwargs):
        self.code_sha256 = code_digest(self.code)
        super().save(*args, **kwargs)
