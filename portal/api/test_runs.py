"""Test runs over the API (docs/DESIGN.md, "Test runs"): make one, list yours, poll its progress,
verdicts and where it would rank, read a run log, delete it, promote it to a submission.

Token authentication as the rest of the v1 API. A test run is its creator's alone: to anyone else
every endpoint answers 404, as for a test run that does not exist. It never appears in
``/api/v1/submissions/``, the leaderboard API or an export."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import parsers, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from evaluator import run_logs
from evaluator.models import Evaluation
from evaluator.progress import submission_progress
from jaxbench import limits
from leaderboard import test_run_preview
from leaderboard.submission_state import state_from_progress
from leaderboard.submission_state_query import states_for
from leaderboard.test_run_verdicts import verdicts
from portal.api.common import ClearErrorsMixin, PayloadTooLarge, UploadRateThrottle
from portal.api.run_logs import EvaluationLogSerializer
from portal.api.serializers import (
    DetailSerializer,
    IntakeErrorSerializer,
    QueueSerializer,
    StateSerializer,
    SubmissionMetadataSerializer,
    SubmissionSerializer,
)
from portal.api.submissions import content_length, validated, with_counts
from submissions import intake
from submissions.intake.test_runs import LABEL
from submissions.models import Submission

# a test run's request: its kernel files, or one zip, and 1 MB of fields and framing
MAX_TEST_RUN_REQUEST_BYTES = limits.MAX_ZIP_BYTES + limits.TEST_RUN_MAX_KERNELS * limits.MAX_KERNEL_BYTES + 1024 * 1024


class TestRunRequestSerializer(serializers.Serializer):
    """At most ``TEST_RUN_MAX_KERNELS`` kernels: JSON ``kernels`` or multipart ``files`` and/or ``zip``."""

    hardware = serializers.CharField(help_text="Hardware target slug, e.g. cpu or tpu-v6e.")
    team = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="The team you would submit it for (its slug); optional when you are in exactly one team.",
    )
    kernels = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        required=False,
        help_text="{workload ID, slug or public name: source}",
    )
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        required=False,
        help_text="multipart: one .py per workload, named by it",
    )
    zip = serializers.FileField(required=False, allow_empty_file=True, help_text="multipart: a .zip of them")
    workloads = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        required=False,
        help_text="multipart: the workload of each file in files, in their order, for files whose names do not "
        "say it ('' where the name does)",
    )


class PromoteRequestSerializer(SubmissionMetadataSerializer):
    publish = serializers.BooleanField(
        required=False, default=False, help_text="publish at once; otherwise private to the team until published"
    )


class VerdictSerializer(serializers.Serializer):
    evaluation = serializers.IntegerField(help_text="its run log: links.log with this id")
    workload = serializers.CharField()
    title = serializers.CharField()
    filename = serializers.CharField()
    stage = serializers.ChoiceField(choices=Evaluation.STAGES)
    state = serializers.CharField(help_text="queued, running, done, skipped (stopped by the pre-check) or failed")
    status = serializers.CharField(help_text="the state in words")
    finished = serializers.BooleanField(help_text="the kernel has its verdict (outcome)")
    outcome = serializers.CharField(
        allow_blank=True, help_text="as everywhere (held_for_review while held); blank until finished"
    )
    held_for_review = serializers.BooleanField(
        help_text="a result the harness held (TRUST.md 6): its measured speedup is shown to you, it counts for "
        "nothing until staff accept it, and a test run is not reviewed: promote it to have it reviewed"
    )
    speedup = serializers.FloatField(allow_null=True)
    speedup_lo = serializers.FloatField(allow_null=True)
    speedup_hi = serializers.FloatField(allow_null=True)
    speedup_text = serializers.CharField(allow_blank=True, help_text="1.42x [1.37, 1.48]")
    message = serializers.CharField(allow_blank=True, help_text="why it failed, in full (finished rows)")
    reused = serializers.BooleanField(help_text="identical code judged earlier: its verdict")
    log = serializers.URLField(help_text="its run log")


class BoardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True, help_text="a board row's rank (the preview's: where it would be)")
    tied = serializers.BooleanField()
    team = serializers.CharField()
    method = serializers.CharField(allow_blank=True)
    geomean = serializers.FloatField()
    geomean_low = serializers.FloatField(allow_null=True)
    geomean_high = serializers.FloatField(allow_null=True)
    solved = serializers.FloatField()
    set_size = serializers.IntegerField()
    fast = serializers.FloatField(allow_null=True)
    expert_pct = serializers.FloatField(allow_null=True)
    correctness = serializers.FloatField(allow_null=True)
    url = serializers.CharField()


class PreviewSerializer(serializers.Serializer):
    rank = serializers.IntegerField(help_text="the rank it would get on the board, were it published now")
    tied = serializers.BooleanField(help_text="its geomean interval overlaps a neighbour's")
    of = serializers.IntegerField(help_text="ranked rows with it")
    board = serializers.CharField(help_text="the board it is placed on: every workload, every sample")
    row = BoardRowSerializer(help_text="its row, built as the board builds its rows")
    above = BoardRowSerializer(allow_null=True, help_text="the board row above it")
    below = BoardRowSerializer(allow_null=True, help_text="the board row below it")


class StatusSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    finished = serializers.BooleanField()
    percent = serializers.FloatField()
    outcomes = serializers.DictField(child=serializers.IntegerField())
    held = serializers.IntegerField()
    waiting_for = serializers.CharField(allow_null=True, help_text="a hardware target with no live worker")
    queue = QueueSerializer(allow_null=True, help_text="while it waits: test runs are in the background lane")


class TestRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    label = serializers.CharField(help_text=f"always {LABEL!r}")
    team = serializers.CharField(help_text="the team it would be submitted for")
    hardware = serializers.CharField()
    kernels = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(help_text="when it is deleted, unless promoted")
    state = StateSerializer()
    links = serializers.DictField(child=serializers.CharField())


class TestRunDetailSerializer(TestRunSerializer):
    status = StatusSerializer()
    verdicts = VerdictSerializer(many=True)
    preview = PreviewSerializer(
        allow_null=True,
        help_text="where it would rank on its hardware's board; null until every kernel has its verdict",
    )


def _url(request, name, *args) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


def _summary(request, run, state) -> dict:
    return {
        "id": run.pk,
        "label": LABEL,
        "team": run.team.slug,
        "hardware": run.hardware.slug,
        "kernels": state.total,
        "created_at": run.created_at,
        "expires_at": run.expires_at,
        "state": state.as_dict(),
        "links": {
            "self": _url(request, "api-test-run-detail", run.pk),
            "page": _url(request, "leaderboard:test-run-detail", run.pk),
            "promote": _url(request, "api-test-run-promote", run.pk),
        },
    }


def _detail(request, run) -> dict:
    progress = submission_progress(run)
    preview = test_run_preview.for_test_run(run) if progress["finished"] else None
    if preview is not None:
        preview["board"] = request.build_absolute_uri(preview["board"])
    rows = [dict(v, log=_url(request, "api-test-run-log", run.pk, v["evaluation"])) for v in verdicts(run)]
    body = {
        **_summary(request, run, state_from_progress(progress)),
        "status": progress,
        "verdicts": rows,
        "preview": preview,
    }
    return TestRunDetailSerializer(body).data


@extend_schema_view(
    list=extend_schema(
        summary="Your test runs",
        tags=["test runs"],
        description="Private evaluations only you see; each is deleted at expires_at unless promoted.",
        responses={200: TestRunSerializer(many=True), 401: DetailSerializer},
    ),
    retrieve=extend_schema(
        summary="A test run: progress, verdicts, where it would rank",
        tags=["test runs"],
        description="Poll it until status.finished. preview places it among the board's ranked rows "
        "(every workload, every sample, current versions) with the board's own ranking.",
        responses={200: TestRunDetailSerializer, 401: DetailSerializer, 404: DetailSerializer},
    ),
    destroy=extend_schema(
        summary="Delete a test run with its results",
        tags=["test runs"],
        responses={204: None, 401: DetailSerializer, 404: DetailSerializer},
    ),
)
class TestRunViewSet(ClearErrorsMixin, viewsets.GenericViewSet):
    serializer_class = TestRunDetailSerializer
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [parsers.JSONParser, parsers.MultiPartParser, parsers.FormParser]
    pagination_class = None

    def initial(self, request, *args, **kwargs):
        # the size cap from the declared Content-Length, before anything parses the body
        if self.action == "create" and content_length(request) > MAX_TEST_RUN_REQUEST_BYTES:
            raise PayloadTooLarge(
                f"A test run is at most {MAX_TEST_RUN_REQUEST_BYTES // (1024 * 1024)} MB: "
                f"{limits.TEST_RUN_MAX_KERNELS} kernel files of at most {limits.MAX_KERNEL_BYTES // 1024} KB, "
                "or one .zip of them."
            )
        super().initial(request, *args, **kwargs)

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action == "create":
            throttles.append(UploadRateThrottle())
        return throttles

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Submission.test_runs.none()
        return Submission.test_runs.owned_by(self.request.user).select_related("team", "hardware")

    def list(self, request):
        runs = list(self.get_queryset().order_by("-created_at", "-id"))
        states = states_for(runs)
        return Response(TestRunSerializer([_summary(request, r, states[r.pk]) for r in runs], many=True).data)

    def retrieve(self, request, pk=None):
        return Response(_detail(request, self.get_object()))

    def destroy(self, request, pk=None):
        intake.delete_test_run(self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Start a test run",
        tags=["test runs"],
        description=f"A private evaluation of at most {limits.TEST_RUN_MAX_KERNELS} kernels, checked as a kernel "
        "submission's files are (one bad file rejects it all, nothing stored) and evaluated by the same harness under "
        "the same rules, after the board's submissions that wait. Only you see it; it is deleted "
        f"{limits.TEST_RUN_DAYS} days later unless promoted. You may keep {limits.TEST_RUN_MAX_LIVE} at a time.",
        request={"application/json": TestRunRequestSerializer, "multipart/form-data": TestRunRequestSerializer},
        responses={
            201: TestRunDetailSerializer,
            400: IntakeErrorSerializer,
            401: DetailSerializer,
            413: DetailSerializer,
            429: DetailSerializer,
        },
        examples=[
            OpenApiExample(
                "JSON kernels",
                request_only=True,
                media_type="application/json",
                value={"hardware": "cpu", "kernels": {"12p": "def workload(x, scale):\n    ...\n"}},
            )
        ],
    )
    def create(self, request):
        data = validated(TestRunRequestSerializer, request.data)
        team = intake.resolve_team(request.user, data.get("team") or None)
        files = data.get("files") or []
        workloads = [w.strip() or None for w in data.get("workloads") or []] or [None] * len(files)
        if len(workloads) != len(files):
            raise intake.IntakeError(
                f"{len(workloads)} workloads for {len(files)} files: one per file, in their order", field="workloads"
            )
        uploads = [intake.Upload(name, code, input="kernels") for name, code in (data.get("kernels") or {}).items()]
        uploads += [intake.Upload(f.name or "file.py", f, workload=w, input="files") for f, w in zip(files, workloads)]
        if data.get("zip") is not None:
            uploads.append(intake.Upload(data["zip"].name or "upload.zip", data["zip"], input="zip", archive=True))
        run = intake.create_test_run(team, request.user, data["hardware"], uploads)
        body = _detail(request, run)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["links"]["self"]})

    @extend_schema(
        summary="Promote a test run to a submission",
        tags=["test runs"],
        description="The test run becomes a submission of its team (the same id, kernels and verdicts: nothing is "
        "uploaded or measured again), named as a kernel submission is; private to the team until published (or "
        "publish: true). Its evaluations still to run move ahead of the test runs in the queue.",
        request=PromoteRequestSerializer,
        responses={200: SubmissionSerializer, 400: IntakeErrorSerializer, 401: DetailSerializer, 404: DetailSerializer},
    )
    @action(detail=True, methods=["post"])
    def promote(self, request, pk=None):
        run = self.get_object()
        data = validated(PromoteRequestSerializer, request.data)
        meta = {k: data.get(k, "") for k in ("method", "model", "framework", "description", "link", "selection")}
        meta["selector"] = data.get("selector", "")
        sub = intake.promote_test_run(run, request.user, meta, publish=data.get("publish", False))
        sub = with_counts(Submission.objects.filter(pk=sub.pk)).get()
        return Response(SubmissionSerializer(sub, context=self.get_serializer_context()).data)

    @extend_schema(
        summary="A test run's run log",
        tags=["test runs"],
        description="One evaluation's run log (its id: verdicts[].evaluation), as /api/v1/evaluations/<id>/log/ "
        "gives a submission's.",
        parameters=[OpenApiParameter("evaluation", OpenApiTypes.INT, OpenApiParameter.PATH)],
        responses={
            200: EvaluationLogSerializer,
            401: DetailSerializer,
            404: OpenApiResponse(DetailSerializer, description="no such test run or evaluation"),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"evaluations/(?P<evaluation>[0-9]+)/log", url_name="log")
    def log(self, request, pk=None, evaluation=None):
        run = self.get_object()
        ev = get_object_or_404(
            Evaluation.objects.filter(candidate__submission=run).select_related("candidate__workload"), pk=evaluation
        )
        data = {
            "evaluation": ev.pk,
            "submission": run.pk,
            "workload": ev.candidate.workload.wid,
            "index": ev.candidate.index,
            "stage": ev.stage,
            "state": ev.state,
            "run_log": run_logs.for_evaluation(ev),
        }
        return Response(EvaluationLogSerializer(data).data)
