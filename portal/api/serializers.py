"""Serializers of the v1 API: the catalogue (workloads, hardware, baselines, experts) and
submissions with their evaluations."""

import datetime

from django.db.models import DateTimeField
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
from evaluator.models import Evaluation
from evaluator.queues import hardware_queue
from jaxbench import traces as trace_format
from jaxbench.metrics import roofline
from jaxbench.verdict import configurations
from jaxbench.verdict import review as review_rules
from leaderboard.submission_state import STATES
from submissions.models import Submission, meta_limit


class WorkloadSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="wid", help_text="The workload ID, e.g. 12p.")
    url = serializers.SerializerMethodField()

    class Meta:
        model = Workload
        fields = [
            "id",
            "number",
            "slug",
            "public_name",
            "title",
            "source",
            "model",
            "category",
            "expert",
            "kernelbench_id",
            "description",
            "version",
            "level",
            "baseline_program",
            "platforms",
            "url",
        ]
        extra_kwargs = {
            "level": {"help_text": "1: the public suite's 50; 2: level 2 (its twins of level-1 tasks are l2-<ID>)."},
            "baseline_program": {
                "help_text": "What speedups are over: xla (the reference under XLA) or pallas (the level's "
                "hand-tuned Pallas kernel)."
            },
            "platforms": {
                "help_text": "The platforms the baseline runs on (cpu, tpu, gpu); an upload for another is refused."
            },
        }

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, obj) -> str:
        request = self.context.get("request")
        path = reverse("api-workload-detail", args=[obj.wid])
        return request.build_absolute_uri(path) if request else path


class WorkloadDetailSerializer(WorkloadSerializer):
    params = serializers.JSONField(source="profiles", help_text="Static parameters per size profile.")
    platform_note = serializers.CharField(help_text="Why the baseline runs on fewer platforms ('' when on all).")
    shapes = serializers.JSONField(help_text="Per profile: input and output shapes and dtypes.")
    costs = serializers.JSONField(help_text="Per profile: analytic FLOPs and bytes.")
    input_names = serializers.ListField(child=serializers.CharField())
    upstream = serializers.JSONField(
        help_text="The public suite file this workload matches: file, commit (40 hex), date, url "
        "(the file at that commit), commit_url, history_url; {} for a workload without one."
    )
    deviations = serializers.JSONField(
        help_text="Deliberate deviations from the public file: [{kind, what, why}], [] when none."
    )
    null_audit = serializers.JSONField(
        help_text="The null-kernel audit: content_hash it was computed for, current (is that this "
        "version's), ours (per null kernel: passes, excess = error over allowance, n_fail, size) and "
        "public (the public check at the recorded commit: status, sizes, per null kernel passes, "
        "max_diff); {} when not audited. /docs/#null-kernels."
    )

    class Meta(WorkloadSerializer.Meta):
        fields = WorkloadSerializer.Meta.fields + [
            "platform_note",
            "notes",
            "degenerate",
            "atol",
            "rtol",
            "tolerance_reason",
            "public_file_note",
            "input_names",
            "params",
            "shapes",
            "costs",
            "reference_source",
            "content_hash",
            "upstream",
            "deviations",
            "null_audit",
        ]


class HardwareSerializer(serializers.ModelSerializer):
    queue = serializers.SerializerMethodField(help_text="The queue its workers consume.")
    is_accelerator = serializers.BooleanField(read_only=True)

    class Meta:
        model = HardwareTarget
        fields = [
            "slug",
            "name",
            "platform",
            "profile",
            "peak_flops",
            "peak_bandwidth",
            "queue",
            "is_accelerator",
            "last_worker_seen_at",
        ]

    def get_queue(self, obj) -> str:
        return hardware_queue(obj.slug)


class BaselineSerializer(serializers.ModelSerializer):
    workload = serializers.CharField(source="workload.wid")
    hardware = serializers.CharField(source="hardware.slug")

    class Meta:
        model = Baseline
        fields = ["id", "workload", "hardware", "profile", "jax_version", "harness_version", "median_s", "measured_at"]


class ExpertSerializer(serializers.ModelSerializer):
    workload = serializers.CharField(source="workload.wid")
    hardware = serializers.CharField(source="hardware.slug")

    class Meta:
        model = ExpertReference
        fields = [
            "id",
            "workload",
            "hardware",
            "implementation",
            "config",
            "median_s",
            "speedup",
            "speedup_lo",
            "speedup_hi",
            "outcome",
            "configs_tried",
            "jax_version",
            "harness_version",
            "updated_at",
        ]


class SubmissionSerializer(serializers.ModelSerializer):
    team = serializers.CharField(source="team.slug")
    team_name = serializers.CharField(source="team.name")
    hardware = serializers.CharField(source="hardware.slug")
    model = serializers.CharField(source="model_name")
    settings = serializers.JSONField(source="trace_settings")
    candidates = serializers.IntegerField(source="n_candidates", read_only=True)
    created_by = serializers.SerializerMethodField()
    held_for_review = serializers.SerializerMethodField(
        help_text="How many of its results the harness held for review (TRUST.md 6): not ranked, not "
        "counted in fast@N and not shown as faster until a staff member accepts them."
    )
    links = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "team",
            "team_name",
            "kind",
            "hardware",
            "method",
            "model",
            "framework",
            "description",
            "link",
            "sampling",
            "selection",
            "selector",
            "budget",
            "settings",
            "upload_key",
            "candidates",
            "created_by",
            "created_at",
            "is_public",
            "published_at",
            "withdrawn_at",
            "held_for_review",
            "links",
        ]

    def get_held_for_review(self, obj) -> int:
        return getattr(obj, "n_held", 0) or 0

    def get_created_by(self, obj) -> str | None:
        return obj.created_by.username if obj.created_by_id and self._member(obj) else None

    def _member(self, obj) -> bool:
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return False
        if user.is_staff:
            return True
        teams = self.context.get("_my_teams")
        if teams is None:  # once per response (setdefault's argument was a query per row)
            teams = self.context["_my_teams"] = set(user.memberships.values_list("team_id", flat=True))
        return obj.team_id in teams

    @extend_schema_field({"type": "object", "additionalProperties": {"type": "string", "format": "uri"}})
    def get_links(self, obj) -> dict:
        request = self.context.get("request")

        def url(name):
            path = reverse(name, args=[obj.pk])
            return request.build_absolute_uri(path) if request else path

        return {
            "self": url("api-submission-detail"),
            "status": url("api-submission-status"),
            "evaluations": url("api-submission-evaluations"),
            "page": url_page(obj, request),
        }

    def to_representation(self, obj):
        data = super().to_representation(obj)
        if not self._member(obj):
            data["upload_key"] = None  # a team's own bookkeeping
        return data


def url_page(obj, request=None) -> str:
    path = reverse("leaderboard:submission-detail", args=[obj.pk])
    return request.build_absolute_uri(path) if request else path


class SubmissionCreatedSerializer(SubmissionSerializer):
    created = serializers.BooleanField(
        help_text="False when upload_key matched an earlier upload of the team: that first submission is returned."
    )

    class Meta(SubmissionSerializer.Meta):
        fields = SubmissionSerializer.Meta.fields + ["created"]


class _MetaFields(serializers.Serializer):
    team = serializers.CharField(
        required=False, allow_blank=True, help_text=("The team's slug; optional when you are in exactly one team.")
    )
    upload_key = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=meta_limit("upload_key"),
        help_text="Idempotency key, unique per team: a retried upload with "
        "the same key returns the first submission (HTTP 200).",
    )


class SubmissionMetadataSerializer(serializers.Serializer):
    """What a kernels submission says about itself: one definition for an upload and for a test
    run promoted to a submission."""

    method = serializers.CharField(max_length=meta_limit("method"))
    model = serializers.CharField(max_length=meta_limit("model_name"), required=False, allow_blank=True)
    framework = serializers.CharField(max_length=meta_limit("framework"), required=False, allow_blank=True)
    description = serializers.CharField(max_length=meta_limit("description"), required=False, allow_blank=True)
    link = serializers.URLField(max_length=meta_limit("link"), required=False, allow_blank=True)
    selection = serializers.ChoiceField(
        choices=list(trace_format.ONE_SAMPLE_SELECTIONS),
        required=False,
        allow_blank=True,
        help_text="How the files were chosen: single_attempt (one try per workload) or best_at_k (picked "
        "among k by your own selector, which saw no verdict of this portal: name it in selector). "
        "Absent: shown as undeclared.",
    )
    selector = serializers.CharField(max_length=meta_limit("selector"), required=False, allow_blank=True)


class KernelSubmissionRequestSerializer(_MetaFields, SubmissionMetadataSerializer):
    """Kernel files: JSON ``kernels`` ({workload: code}) or multipart ``files`` (one .py per
    workload, named by ID, slug or public folder name) and/or ``zip``."""

    hardware = serializers.CharField(help_text="Hardware target slug, e.g. cpu or tpu-v6e.")
    kernels = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        required=False,
        help_text="{workload ID, slug or public name: source}",
    )
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True), required=False, help_text="multipart: one .py per workload"
    )
    zip = serializers.FileField(
        required=False,
        allow_empty_file=True,
        help_text="multipart: a .zip of <workload>.py files or <workload>/*.py folders",
    )


class TraceUploadRequestSerializer(_MetaFields):
    trace = serializers.FileField(
        allow_empty_file=True,
        help_text="The jaxbench-trace/1 JSON Lines file, an ATIF trajectory or an ADK session JSON.",
    )
    hardware = serializers.CharField(required=False, help_text="ATIF/ADK: the hardware target, unless declared.")
    workload = serializers.CharField(required=False, help_text="ATIF/ADK: the workload of kernels that name none.")
    method = serializers.CharField(required=False, help_text="ATIF/ADK: the method (default: the agent's name).")
    model = serializers.CharField(required=False, help_text="ATIF/ADK: the model (default: the trajectory's).")


class RunningSerializer(serializers.Serializer):
    workload = serializers.CharField()
    stage = serializers.CharField()
    lane = serializers.CharField()
    elapsed_s = serializers.FloatField()
    left_s = serializers.FloatField(help_text="estimated from the workload's median duration")
    worker = serializers.CharField()
    mine = serializers.BooleanField(help_text="a row of this submission")
    text = serializers.CharField()


class QueueSerializer(serializers.Serializer):
    queue = serializers.CharField()
    lane = serializers.CharField(help_text="user, or background (demo and maintenance work, after every user's)")
    position = serializers.IntegerField(help_text="queued rows ahead of this submission's first queued row")
    costed = serializers.IntegerField(
        help_text="rows ahead whose workloads the estimate reads (the first AHEAD_COSTED); past them each "
        "row ahead costs their mean"
    )
    queued = serializers.IntegerField(help_text="this submission's rows queued there")
    workers = serializers.IntegerField(help_text="live workers consuming the queue")
    start_in_s = serializers.FloatField(allow_null=True)
    finish_in_s = serializers.FloatField(allow_null=True)
    estimated_with_default = serializers.IntegerField(
        help_text="rows of workloads never measured here, counted at default_s"
    )
    default_s = serializers.FloatField()
    running = RunningSerializer(many=True)
    text = serializers.CharField(help_text="the same in one line, as the page and the CLI show it")


class StateSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=list(STATES),
        help_text="queued, running, failed (every candidate failed), partial (some correct, some failed), "
        "held (a correct result held for review by the portal's staff) or measured (every candidate correct)",
    )
    label = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    correct = serializers.IntegerField()
    held = serializers.IntegerField()
    failed = serializers.DictField(child=serializers.IntegerField(), help_text="{failing outcome: n}")
    reason = serializers.CharField(help_text="why, in one line")


class ProgressSerializer(serializers.Serializer):
    submission = serializers.IntegerField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    finished = serializers.BooleanField()
    percent = serializers.FloatField()
    stages = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    outcomes = serializers.DictField(child=serializers.IntegerField())
    held = serializers.IntegerField(help_text="finished results held for review (outcome held_for_review)")
    waiting_for = serializers.CharField(allow_null=True)
    precheck_saved = serializers.DictField()
    state = StateSerializer(
        help_text="The submission's state (leaderboard/submission_state.py), as every list and page shows it"
    )
    queue = QueueSerializer(
        allow_null=True,
        help_text="while rows wait: the queue, rows ahead, what runs now and the estimated start "
        "and finish (median measured durations per workload; null without work waiting)",
    )


class UTCDateTimeField(serializers.DateTimeField):
    """DRF's output for UTC (TIME_ZONE, never activated otherwise): ISO 8601 with ``Z``, without
    its per-value time-zone lookup (7 ms of a 250-row evaluations page)."""

    def to_representation(self, value):
        if not value:
            return None
        return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


# the serializer context's key of an evaluation's log URL with _PK_SLOT in place of the id
_LOG_URL, _PK_SLOT = "evaluation_log_url", 987654321987


class EvaluationSerializer(serializers.ModelSerializer):
    serializer_field_mapping = {**serializers.ModelSerializer.serializer_field_mapping, DateTimeField: UTCDateTimeField}
    workload = serializers.CharField(source="candidate.workload.wid")
    index = serializers.IntegerField(source="candidate.index")
    round = serializers.IntegerField(source="candidate.round", allow_null=True)
    parent = serializers.IntegerField(source="candidate.parent_index", allow_null=True)
    filename = serializers.CharField(source="candidate.filename")
    hardware = serializers.CharField(source="hardware.slug")
    claimed_by_agent = serializers.SerializerMethodField(
        help_text="What the uploaded trace says of this sample (outcome, speedup, speedup_lo, "
        "speedup_hi): self-reported by the agent, not measured by this portal, never in the measured "
        "fields above; null when the upload claims nothing."
    )
    timed_before_intervals = serializers.BooleanField(
        read_only=True,
        help_text="a correct result timed before speedups had 95% intervals (speedup_lo/hi "
        "null): classified by its point; a tie cannot be told",
    )
    held_for_review = serializers.BooleanField(
        source="is_held",
        read_only=True,
        help_text="held for review (TRUST.md 6): outcome held_for_review and no speedup until a staff "
        "member accepts it",
    )
    configurations = serializers.SerializerMethodField(
        help_text="a multi-configuration workload's configurations, each checked and timed (null otherwise)"
    )
    log = serializers.SerializerMethodField(
        help_text="its run log (phases, timings, each child's captured output): /api/v1/evaluations/<id>/log/"
    )
    of_limit = serializers.SerializerMethodField(
        help_text="each measured time as a percentage of the hardware's limit: the roofline time (the "
        "workload's FLOPs and bytes over the target's peak FLOP/s and bandwidth, with their source) over "
        "the candidate's median (candidate_pct) and the XLA baseline's beside it (baseline_pct); per "
        "configuration for a multi-configuration workload. Null where the target's peaks are unknown "
        "(cpu); a time withheld (held for review) has none. Above 100: faster than the roofline allows."
    )
    review = serializers.ChoiceField(
        choices=Evaluation.REVIEW_STATES,
        read_only=True,
        help_text='"" (not held), held, accepted or rejected (then outcome rejected, reward_hack)',
    )

    class Meta:
        model = Evaluation
        fields = [
            "id",
            "workload",
            "index",
            "round",
            "parent",
            "filename",
            "hardware",
            "stage",
            "state",
            "outcome",
            "speedup",
            "speedup_lo",
            "speedup_hi",
            "timed_before_intervals",
            "held_for_review",
            "review",
            "message",
            "attempts",
            "claimed_by_agent",
            "record",
            "configurations",
            "of_limit",
            "log",
            "enqueued_at",
            "started_at",
            "finished_at",
        ]

    def to_representation(self, obj):
        data = super().to_representation(obj)
        if obj.review:
            data["record"] = review_rules.public_record(obj.record, obj.review)
        if obj.is_held:  # held means held: nothing public shows it as faster before a review
            data["outcome"] = review_rules.HELD_OUTCOME
            data["speedup"] = data["speedup_lo"] = data["speedup_hi"] = None
            data["timed_before_intervals"] = False
            data["message"] = data["record"]["message"]
        return data

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "outcome": {"type": "string"},
                "speedup": {"type": "number", "nullable": True},
                "speedup_lo": {"type": "number", "nullable": True},
                "speedup_hi": {"type": "number", "nullable": True},
                "note": {"type": "string"},
            },
        }
    )
    def get_claimed_by_agent(self, obj) -> dict | None:
        c = obj.candidate
        if not c.reported_outcome and c.reported_speedup is None:
            return None
        return {
            "outcome": c.reported_outcome,
            "speedup": c.reported_speedup,
            "speedup_lo": c.reported_speedup_lo,
            "speedup_hi": c.reported_speedup_hi,
            "note": "self-reported by the agent, not measured",
        }

    @extend_schema_field(OpenApiTypes.URI)
    def get_log(self, obj) -> str:
        # one reverse() per response, not per row: a 250-row page spent ~6 ms reversing URLs
        template = self.context.get(_LOG_URL)
        if template is None:
            request = self.context.get("request")
            path = reverse("api-evaluation-log", args=[_PK_SLOT])
            template = self.context[_LOG_URL] = request.build_absolute_uri(path) if request else path
        return template.replace(str(_PK_SLOT), str(obj.pk), 1)

    @extend_schema_field(serializers.ListField(child=serializers.DictField(), allow_null=True))
    def get_configurations(self, obj):
        """Per configuration of a multi-configuration workload (null otherwise): name, case, outcome,
        error_category, speedup, speedup_ci, median_s, baseline_median_s; withheld while held."""
        return configurations.public_rows(review_rules.public_record(obj.record, obj.review).get("configurations"))

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "roofline": {"type": "object", "nullable": True, "description": "Roofline.as_dict"},
                "candidate_pct": {"type": "number", "nullable": True},
                "baseline_pct": {"type": "number", "nullable": True},
                "configurations": {"type": "array", "nullable": True, "items": {"type": "object"}},
            },
        }
    )
    def get_of_limit(self, obj) -> dict | None:
        """From the public record (held means held: a withheld time has no figure either), the
        workload's costs and the target's peaks (``jaxbench.metrics.roofline``)."""
        rec = review_rules.public_record(obj.record, obj.review)
        costs, hardware = obj.candidate.workload.costs, obj.hardware.slug

        def limit(case, median_s, baseline_s) -> dict | None:
            roof = roofline.of_case(costs, case, hardware)
            if roof is None:
                return None
            c, b = roof.fraction(median_s), roof.fraction(baseline_s)
            return {
                "roofline": roof.as_dict(),
                "candidate_pct": None if c is None else 100.0 * c,
                "baseline_pct": None if b is None else 100.0 * b,
            }

        per = [
            {"name": c.get("name"), **entry}
            for c in rec.get("configurations") or ()
            if (entry := limit(c.get("case"), c.get("median_s"), c.get("baseline_median_s")))
        ]
        top = limit(rec.get("profile"), (rec.get("timing") or {}).get("median_s"), rec.get("baseline_median_s"))
        if top is None and not per:
            return None
        return {
            **(top or {"roofline": None, "candidate_pct": None, "baseline_pct": None}),
            "configurations": per or None,
        }


class ErrorItemSerializer(serializers.Serializer):
    file = serializers.CharField(required=False, allow_null=True)
    line = serializers.IntegerField(required=False, allow_null=True)
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()
    input = serializers.CharField(required=False)


class IntakeErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = ErrorItemSerializer(many=True)


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()
