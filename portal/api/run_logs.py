"""An evaluation's run log over the API: ``GET /api/v1/evaluations/<id>/log/``.

Its own endpoint, not a field of the evaluation list: a log carries up to four captured streams
of :data:`jaxbench.run_log.OUTPUT_CAP` characters, which the list's pages (100 rows by default,
up to 1,000) would carry for every row (docs/DESIGN.md, "Run logs", has the sizes measured).
Each evaluation of the list links to its log (``log``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, serializers
from rest_framework.response import Response

from evaluator import run_logs
from evaluator.models import Evaluation
from jaxbench.run_log import OUTPUT_CAP
from portal.api.common import ClearErrorsMixin
from portal.api.serializers import DetailSerializer
from portal.api.submissions import visible_submissions


class PhaseSerializer(serializers.Serializer):
    name = serializers.CharField()
    key = serializers.CharField(help_text="the record's key, phases.<key>")
    wall_s = serializers.FloatField(help_text="wall seconds seen by the trusted side")
    cpu_s = serializers.FloatField(
        allow_null=True, help_text="CPU seconds of the child where the harness read them (the compile side)"
    )
    child_s = serializers.DictField(
        child=serializers.FloatField(),
        allow_null=True,
        help_text="the child's own account of the phase in seconds (its claim, untrusted)",
    )
    what = serializers.CharField(help_text="what the phase does")
    status = serializers.ChoiceField(
        choices=["done", "stopped"], help_text="stopped: the run ended there with a failing outcome"
    )


class TimingSummarySerializer(serializers.Serializer):
    n = serializers.IntegerField(allow_null=True, help_text="timed iterations")
    median_s = serializers.FloatField(allow_null=True)
    min_s = serializers.FloatField(allow_null=True)
    max_s = serializers.FloatField(allow_null=True)
    spread = serializers.FloatField(allow_null=True, help_text="(p90 - p10) / median")
    interval_s = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="[p10, p90] of the samples"
    )
    method = serializers.CharField(allow_null=True)


class TimingSerializer(serializers.Serializer):
    candidate = TimingSummarySerializer(allow_null=True)
    baseline = TimingSummarySerializer(allow_null=True, help_text="the XLA baseline, timed beside the candidate")
    speedup = serializers.FloatField(allow_null=True)
    speedup_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    baseline_source = serializers.CharField(allow_null=True)


class OutputSerializer(serializers.Serializer):
    child = serializers.ChoiceField(
        choices=["export", "timer"], help_text="export: ran the candidate's Python; timer: ran the exported program"
    )
    label = serializers.CharField()
    stream = serializers.ChoiceField(choices=["stdout", "stderr"])
    text = serializers.CharField(
        allow_blank=True,
        help_text=f"the stream's last {OUTPUT_CAP} characters, ANSI escapes and control characters removed: "
        "the candidate's text, to be shown as text",
    )
    trimmed = serializers.BooleanField(help_text="something was left out (the sandbox's cap, the record or here)")
    bytes = serializers.IntegerField(allow_null=True, help_text="bytes the child wrote to the stream in all")


class ConfigurationSerializer(serializers.Serializer):
    name = serializers.CharField()
    outcome = serializers.CharField(allow_null=True)
    total_s = serializers.FloatField(allow_null=True)


# named in SPECTACULAR_SETTINGS's ENUM_NAME_OVERRIDES (a submission's ``kind`` is another enum)
RUN_LOG_KINDS = ["evaluation", "lowering", "none"]


class RunLogSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=RUN_LOG_KINDS,
        help_text="lowering: a pre-check stopped at its lowering; none: no run recorded",
    )
    outcome = serializers.CharField(allow_null=True)
    error_category = serializers.CharField(allow_null=True)
    phase_reached = serializers.CharField(allow_null=True)
    reused = serializers.BooleanField(help_text="the verdict of identical code judged earlier: the log is that run's")
    reused_from = serializers.IntegerField(allow_null=True, help_text="the evaluation whose run it is")
    speed_withheld = serializers.BooleanField(help_text="held for review: timings withheld (TRUST.md 6)")
    total_s = serializers.FloatField(allow_null=True)
    context = serializers.DictField(child=serializers.CharField(), help_text="hardware, platform, mode, versions")
    configurations = ConfigurationSerializer(many=True)
    phases = PhaseSerializer(many=True, help_text="in the order the harness runs them")
    timing = TimingSerializer(allow_null=True)
    outputs = OutputSerializer(many=True)
    remarks = serializers.ListField(child=serializers.CharField())


class EvaluationLogSerializer(serializers.Serializer):
    evaluation = serializers.IntegerField()
    submission = serializers.IntegerField()
    workload = serializers.CharField()
    index = serializers.IntegerField()
    stage = serializers.CharField()
    state = serializers.CharField()
    run_log = RunLogSerializer()


@extend_schema(
    summary="An evaluation's run log",
    description="Its phases with wall (and, on the compile side, CPU) seconds, the timing summary of the "
    "candidate and the baseline, and each sandboxed child's captured stdout and stderr, bounded and "
    "cleaned of control characters. A reused evaluation's log is its precedent's run (reused_from); a "
    "held one's timings are withheld.",
    tags=["submissions"],
    parameters=[OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH)],
    responses={200: EvaluationLogSerializer, 404: DetailSerializer},
)
class EvaluationLog(ClearErrorsMixin, generics.GenericAPIView):
    """An evaluation of a submission you may see (published, or your team's)."""

    serializer_class = EvaluationLogSerializer
    permission_classes = [permissions.AllowAny]

    def get(self, request, pk):
        ev = get_object_or_404(
            Evaluation.objects.filter(candidate__submission__in=visible_submissions(request.user)).select_related(
                "candidate__workload"
            ),
            pk=pk,
        )
        data = {
            "evaluation": ev.pk,
            "submission": ev.candidate.submission_id,
            "workload": ev.candidate.workload.wid,
            "index": ev.candidate.index,
            "stage": ev.stage,
            "state": ev.state,
            "run_log": run_logs.for_evaluation(ev),
        }
        return Response(EvaluationLogSerializer(data).data)
