"""The catalog: the hardware targets, the 50 workloads (a mirror of the registry in
``jaxbench/workloads``), their XLA baselines and the expert references. The lowest Django
layer: every other app points here, it points nowhere."""

from django.db import models
from django.urls import reverse

from jaxbench import record as record_terms
from jaxbench import workloads as registry
from jaxbench.hardware import PRECHECK_PLATFORMS
from jaxbench.workloads.base import CASE_SEP


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
    def is_accelerator(self) -> bool:
        return self.platform != "cpu"

    @property
    def prechecked(self) -> bool:
        """Whether candidates for this target start with the CPU pre-check (TPU targets only)."""
        return self.platform in PRECHECK_PLATFORMS


class Workload(models.Model):
    """Mirror of the registry in jaxbench/workloads, written only by sync_registry."""

    wid = models.CharField("ID", max_length=8, unique=True)  # "12p", a later level's twin "l2-8p"
    level = models.PositiveSmallIntegerField(default=1, db_index=True)
    number = models.PositiveSmallIntegerField()  # within its level
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
        blank=True, help_text="why the public suite's baseline.py cannot be uploaded unchanged, and what to change"
    )
    input_names = models.JSONField(default=list)
    profiles = models.JSONField(default=dict)
    shapes = models.JSONField(default=dict, help_text="per profile: inputs and output shapes/dtypes")
    costs = models.JSONField(default=dict, help_text="per profile: flops and bytes")
    reference_source = models.TextField(blank=True)
    # the file /workloads/<slug>/starter.py serves (catalog.starter), built by sync_registry: a web
    # worker that built it on request imported JAX and the registry first (1.9 s, +220 MB)
    starter_source = models.TextField(blank=True)
    # The registry's human version number and the content hash it stands for (versions.py).
    version = models.PositiveIntegerField(default=1)
    content_hash = models.CharField(max_length=64, blank=True)
    # {profile: {configuration: values}}; empty for a one-configuration workload. ``shapes`` and
    # ``costs`` are then keyed by case ("small/b4_s512") instead of by profile.
    configurations = models.JSONField(default=dict)
    # The public suite file this workload matches ({} for a later level: file, commit, date, url,
    # commit_url, history_url), its deliberate deviations ([{kind, what, why}]) and the
    # null-kernel audit (jaxbench/workloads/null_audit.py; {} when not generated), with
    # ``current``: whether it was computed for this content hash.
    upstream = models.JSONField(default=dict, blank=True)
    deviations = models.JSONField(default=list, blank=True)
    null_audit = models.JSONField(default=dict, blank=True)
    # What the workload is timed against ("xla", or a level's hand-tuned "pallas" kernel) and the
    # platforms that baseline runs on (jaxbench Workload.platforms), with why where narrower.
    baseline_program = models.CharField(max_length=10, default="xla")
    platforms = models.JSONField(default=list, blank=True)
    platform_note = models.TextField(blank=True)

    class Meta:
        ordering = ["level", "number"]
        constraints = [models.UniqueConstraint(fields=["level", "number"], name="catalog_workload_level_number")]

    def __str__(self):
        return self.slug

    def get_absolute_url(self):
        return reverse("leaderboard:workload-detail", args=[self.slug])

    @property
    def baseline_name(self) -> str:
        """How pages name what this workload is timed against: "XLA", or a level's "Pallas" kernel."""
        return "Pallas" if self.baseline_program == "pallas" else "XLA"

    def runs_on(self, platform: str) -> bool:
        """Whether the baseline runs on ``platform`` (an empty list: a mirror synced before it was kept)."""
        return not self.platforms or platform in self.platforms

    @property
    def registry_entry(self):
        return registry.get(self.wid)

    def cases(self, profile: str) -> list[str]:
        """The harness cases of ``profile`` (registry.base.Workload.cases), from the mirror."""
        names = list((self.configurations or {}).get(profile, {}))
        return [f"{profile}{CASE_SEP}{n}" for n in names] if names else [profile]


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
        constraints = [
            models.UniqueConstraint(
                fields=["workload", "hardware", "profile", "jax_version", "harness_version"],
                name="one_baseline_per_key",
            )
        ]
        ordering = ["workload__level", "workload__number"]


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
        ordering = ["workload__level", "workload__number"]

    @property
    def timed_before_intervals(self) -> bool:
        return self.outcome in record_terms.CORRECT_OUTCOMES and self.speedup is not None and self.speedup_lo is None

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
