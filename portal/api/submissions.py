"""Submissions over the API: create (kernels or a trace), list the own teams', detail, status,
evaluations, publish and withdraw. Every upload goes through ``submissions.intake``."""

from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import exceptions, generics, mixins, parsers, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from evaluator.models import Evaluation
from evaluator.progress import held_count, submission_progress
from jaxbench import limits
from leaderboard.submission_state import state_from_progress
from leaderboard.submission_state_query import candidate_counts, held_counts
from portal.api.common import (
    RAW_TRACE_TYPES,
    ClearErrorsMixin,
    EvaluationPagination,
    JSONLinesParser,
    JSONLParser,
    PayloadTooLarge,
    TrajectoryJSONParser,
    UploadRateThrottle,
)
from portal.api.filters import EvaluationFilter, SubmissionFilter
from portal.api.serializers import (
    DetailSerializer,
    EvaluationSerializer,
    IntakeErrorSerializer,
    KernelSubmissionRequestSerializer,
    ProgressSerializer,
    SubmissionCreatedSerializer,
    SubmissionSerializer,
    TraceUploadRequestSerializer,
)
from submissions import intake
from submissions.models import Candidate, Submission

# A kernel upload holds at most a zip and MAX_FILES kernel files, plus the form's own bytes.
MAX_KERNEL_REQUEST_BYTES = limits.MAX_ZIP_BYTES + limits.MAX_FILES * limits.MAX_KERNEL_BYTES + 1024 * 1024


def content_length(request) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def _flatten(errors, prefix=None) -> list[dict]:
    """DRF serializer errors -> the intake's ``[{"field", "message"}]``."""
    out = []
    if isinstance(errors, dict):
        for key, value in errors.items():
            field = key if prefix is None else f"{prefix}.{key}"
            out.extend(_flatten(value, None if field == "non_field_errors" else field))
    elif isinstance(errors, list):
        for i, value in enumerate(errors):
            if isinstance(value, (dict, list)):
                out.extend(_flatten(value, f"{prefix}[{i}]" if prefix else str(i)))
            else:
                out.append({"field": prefix, "message": str(value)})
    else:
        out.append({"field": prefix, "message": str(errors)})
    return out


def validated(serializer_class, data) -> dict:
    ser = serializer_class(data=data)
    if not ser.is_valid():
        raise intake.IntakeError(_flatten(ser.errors))
    return ser.validated_data


def listed(submissions):
    """The rows the serializer shows, newest first (their counts come with ``add_counts``)."""
    return submissions.select_related("team", "hardware", "created_by").order_by("-created_at", "-id")


def add_counts(submissions) -> list:
    """Set ``n_candidates`` and ``n_held`` on each of ``submissions`` (a page, or one): a few
    queries for all of them, after the page is cut.

    Not annotations of the listed queryset: ``Count("candidates")`` beside the correlated held
    count grouped by that subquery, which SQLite evaluated once per candidate row (quadratic in
    the submission's size: minutes for 7,000 candidates); and even as scalar subqueries they
    were counted for every row before the sort and the page cut (0.12 s for 200 submissions of
    7,200 candidates on SQLite). Here the candidates come from the summaries that counted them
    (``submission_state_query.candidate_counts``), the held rows from their index."""
    rows = list(submissions)
    ids = [s.pk for s in rows]
    totals, held = candidate_counts(ids), held_counts(ids)
    for s in rows:
        s.n_candidates, s.n_held = totals.get(s.pk, 0), held.get(s.pk, 0)
    return rows


def with_counts(submissions):
    """``submissions`` annotated with ``n_candidates`` and ``n_held`` as two scalar subqueries,
    for a queryset of one or a few rows (a page of them: ``add_counts``)."""
    n = (
        Candidate.objects.filter(submission=OuterRef("pk"))
        .order_by()  # not the model's ordering: it would join the submission and workload tables
        .values("submission")
        .annotate(n=Count("id"))
        .values("n")
    )
    zero = Value(0, output_field=IntegerField())
    return listed(submissions).annotate(
        n_candidates=Coalesce(Subquery(n, output_field=IntegerField()), zero), n_held=held_count()
    )


def visible_submissions(user):
    return Submission.objects.filter(pk__in=Submission.objects.visible_to(user).values("pk"))


def submissions_for_detail(user):
    return listed(visible_submissions(user))


def require_member(request, submission):
    if not submission.team.is_member(request.user):
        raise exceptions.PermissionDenied("Only members of the submission's team can do this.")


_CREATE_RESPONSES = {
    201: SubmissionCreatedSerializer,
    200: OpenApiResponse(
        SubmissionCreatedSerializer, description="upload_key matched an earlier upload: the first submission, unchanged"
    ),
    400: IntakeErrorSerializer,
    401: DetailSerializer,
    413: DetailSerializer,
    429: DetailSerializer,
}


@extend_schema_view(
    list=extend_schema(summary="Your teams' submissions", tags=["submissions"]),
    retrieve=extend_schema(
        summary="A submission (published, or your team's)",
        tags=["submissions"],
        responses={200: SubmissionSerializer, 404: DetailSerializer},
    ),
)
class SubmissionViewSet(ClearErrorsMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = SubmissionSerializer
    filterset_class = SubmissionFilter
    parser_classes = [parsers.JSONParser, parsers.MultiPartParser, parsers.FormParser]

    def get_permissions(self):
        if self.action in ("retrieve", "status"):
            return [permissions.AllowAny()]
        return [permissions.IsAuthenticated()]

    def initial(self, request, *args, **kwargs):
        # The upload size caps are checked from the declared Content-Length before anything else,
        # authentication included: SessionAuthentication's CSRF check reads request.POST, which
        # parses (and spools) the whole multipart body of a browser-session request.
        if self.action == "create" and content_length(request) > MAX_KERNEL_REQUEST_BYTES:
            raise PayloadTooLarge(
                f"A kernel upload is at most {MAX_KERNEL_REQUEST_BYTES // (1024 * 1024)} MB: "
                f"a .zip of at most {limits.MAX_ZIP_BYTES // (1024 * 1024)} MB and files of at "
                f"most {limits.MAX_KERNEL_BYTES // 1024} KB each."
            )
        if self.action == "trace" and content_length(request) > limits.MAX_TRACE_BYTES + 1024 * 1024:
            raise PayloadTooLarge(f"A trace is at most {limits.MAX_TRACE_BYTES // (1024 * 1024)} MB.")
        super().initial(request, *args, **kwargs)

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action in ("create", "trace"):
            throttles.append(UploadRateThrottle())
        return throttles

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Submission.objects.none()
        user = self.request.user
        if self.action == "list":
            mine = (
                Submission.objects.all() if user.is_staff else Submission.objects.filter(team__memberships__user=user)
            )
            return listed(Submission.objects.filter(pk__in=mine.values("pk")))
        return submissions_for_detail(user)

    def paginate_queryset(self, queryset):
        return add_counts(super().paginate_queryset(queryset) or [])

    def get_object(self):
        return add_counts([super().get_object()])[0]

    def _created(self, submission):
        submission.n_candidates = submission.candidates.count()
        submission.created = not getattr(submission, "was_duplicate", False)
        data = SubmissionCreatedSerializer(submission, context=self.get_serializer_context()).data
        return Response(
            data,
            status=status.HTTP_201_CREATED if submission.created else status.HTTP_200_OK,
            headers={"Location": data["links"]["self"]},
        )

    @extend_schema(
        summary="Submit kernel files",
        tags=["submissions"],
        description="One source per workload: JSON `kernels` ({workload: code}) or multipart `files` "
        "(each .py named by workload ID, slug or public folder name) and/or a `zip` of them. "
        "Each file is checked (size, UTF-8, Python syntax, a module-level `workload`, a known "
        "workload name); one bad file rejects the whole submission and nothing is stored.",
        request={
            "application/json": KernelSubmissionRequestSerializer,
            "multipart/form-data": KernelSubmissionRequestSerializer,
        },
        responses=_CREATE_RESPONSES,
        examples=[
            OpenApiExample(
                "JSON kernels",
                request_only=True,
                media_type="application/json",
                value={
                    "hardware": "cpu",
                    "method": "Hand-written",
                    "model": "Human",
                    "upload_key": "rmsnorm-v1",
                    "kernels": {"12p": "def workload(x, scale):\n    ...\n"},
                },
            )
        ],
    )
    def create(self, request):
        # An oversized body was refused in initial(), before anything parsed it.
        data = validated(KernelSubmissionRequestSerializer, request.data)
        team = intake.resolve_team(request.user, data.get("team"))
        uploads = [intake.Upload(name, code, input="kernels") for name, code in (data.get("kernels") or {}).items()]
        uploads += [intake.Upload(f.name or "file.py", f, input="files") for f in data.get("files") or []]
        if data.get("zip") is not None:
            uploads.append(intake.Upload(data["zip"].name or "upload.zip", data["zip"], input="zip", archive=True))
        meta = {
            k: data.get(k, "") for k in ("method", "model", "framework", "description", "link", "selection", "selector")
        }
        meta["upload_key"] = data.get("upload_key")
        submission = intake.create_kernel_submission(team, request.user, data["hardware"], meta, uploads)
        return self._created(submission)

    @extend_schema(
        summary="Upload an agent trace",
        tags=["submissions"],
        description="A `jaxbench-trace/1` JSON Lines trace (format: /docs/trace-format/, JSON Schema: "
        "/schemas/jaxbench-trace-1.json), as multipart field `trace` or as the raw body with "
        "`Content-Type: application/x-ndjson` (then `team` and `upload_key` are query "
        "parameters). Parsed line by line; every error names its line and field. An ATIF "
        "trajectory or a Google ADK session JSON is accepted the same way (raw body: "
        "`Content-Type: application/json`): the format is detected, every kernel the agent wrote "
        "becomes a sample (/docs/trace-format/#trajectories), and `hardware`, `workload`, "
        "`method`, `model` say what the document does not; errors name the JSON path.",
        request={
            "multipart/form-data": TraceUploadRequestSerializer,
            "application/x-ndjson": OpenApiTypes.BINARY,
            "application/json": OpenApiTypes.OBJECT,
        },
        parameters=[
            OpenApiParameter("team", OpenApiTypes.STR, description="Team slug (raw-body uploads)."),
            OpenApiParameter("upload_key", OpenApiTypes.STR, description="Idempotency key (raw-body uploads)."),
            *(
                OpenApiParameter(name, OpenApiTypes.STR, description=f"ATIF/ADK trajectories: {text}")
                for name, text in (
                    ("hardware", "the hardware target, unless the trajectory declares it"),
                    ("workload", "the workload of kernels that name none (single-workload runs)"),
                    ("method", "the method (default: the agent's or app's name)"),
                    ("model", "the model (default: the trajectory's)"),
                )
            ),
        ],
        responses=_CREATE_RESPONSES,
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="trace",
        url_name="trace",
        parser_classes=[parsers.MultiPartParser, JSONLinesParser, JSONLParser, TrajectoryJSONParser],
    )
    def trace(self, request):
        raw_body = (request.content_type or "").split(";")[0].strip().lower() in RAW_TRACE_TYPES
        data = request.data
        params = request.query_params
        team_slug = (params.get("team") if raw_body else data.get("team")) or params.get("team")
        key = (params.get("upload_key") if raw_body else data.get("upload_key")) or params.get("upload_key")
        if not isinstance(team_slug, (str, type(None))) or not isinstance(key, (str, type(None))):
            raise intake.IntakeError("must be a string", field="team")
        options = {
            name: (params.get(name) if raw_body else data.get(name)) or params.get(name)
            for name in ("hardware", "workload", "method", "model")
        }
        stream = data.get("trace")
        if stream is None or isinstance(stream, str):
            raise intake.IntakeError(
                "attach the trace as the multipart file field 'trace', or send it as the "
                "body with Content-Type: application/x-ndjson (an ATIF or ADK JSON document: "
                "application/json)",
                field="trace",
            )
        team = intake.resolve_team(request.user, team_slug)
        is_json = (request.content_type or "").split(";")[0].strip().lower() == "application/json"
        submission = intake.create_trace_submission(
            team, request.user, stream, upload_key=key or None, options=options, document=is_json
        )
        return self._created(submission)

    @extend_schema(
        summary="Evaluation progress", tags=["submissions"], responses={200: ProgressSerializer, 404: DetailSerializer}
    )
    @action(detail=True, methods=["get"])
    def status(self, request, pk=None):
        submission = self.get_object()
        progress = submission_progress(submission)
        state = state_from_progress(progress).as_dict()  # no query more
        return Response({"submission": submission.pk, **progress, "state": state})

    @extend_schema(
        summary="Publish (team members)",
        tags=["submissions"],
        request=None,
        responses={200: SubmissionSerializer, 403: DetailSerializer, 404: DetailSerializer},
    )
    @action(detail=True, methods=["post"])
    def publish(self, request, pk=None):
        submission = self.get_object()
        require_member(request, submission)
        submission.publish()
        return Response(self.get_serializer(submission).data)

    @extend_schema(
        summary="Withdraw from public view (team members)",
        tags=["submissions"],
        request=None,
        responses={200: SubmissionSerializer, 403: DetailSerializer, 404: DetailSerializer},
    )
    @action(detail=True, methods=["post"])
    def withdraw(self, request, pk=None):
        submission = self.get_object()
        require_member(request, submission)
        submission.withdraw()
        return Response(self.get_serializer(submission).data)


@extend_schema(
    summary="The evaluations of a submission",
    tags=["submissions"],
    parameters=[OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH)],
)
class EvaluationList(ClearErrorsMixin, generics.ListAPIView):
    """Paginated; filter by workload (ID, slug or public name; comma-separated), outcome, state and stage."""

    serializer_class = EvaluationSerializer
    filterset_class = EvaluationFilter
    permission_classes = [permissions.AllowAny]
    pagination_class = EvaluationPagination

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Evaluation.objects.none()
        # only whether it may be seen: the counts the detail shows are not needed here
        submission = get_object_or_404(visible_submissions(self.request.user), pk=self.kwargs["pk"])
        return Evaluation.objects.filter(candidate__submission=submission).order_by(
            "candidate__workload__level", "candidate__workload__number", "candidate__index", "stage", "id"
        )

    def list(self, request, *args, **kwargs):
        # The page's ids first, sorted and skipped over the covering indexes, then its rows whole
        # with what they serialize only: sorting and skipping whole rows (each with its record)
        # and building every column cost 56 ms of the last 250-page of a 7,200-evaluation
        # submission (load benchmark, SQLite); ids then rows, 10 + 15 ms.
        ids = list(self.paginate_queryset(self.filter_queryset(self.get_queryset()).values_list("pk", flat=True)))
        rows = Evaluation.objects.filter(pk__in=ids).select_related("candidate__workload", "hardware").only(*LISTED)
        by_pk = {e.pk: e for e in rows}
        serializer = self.get_serializer([by_pk[pk] for pk in ids], many=True)
        return self.get_paginated_response(serializer.data)


# what EvaluationSerializer reads (Evaluation.only): a row's other columns (its failures' JSON,
# lease, worker, versions, review notes), its candidate's code and its workload's sources,
# shapes and audits are never loaded
LISTED = (
    *(f.name for f in Evaluation._meta.concrete_fields if f.name in EvaluationSerializer.Meta.fields),
    "candidate",
    "hardware",
    "review",
    "candidate__workload",
    "candidate__index",
    "candidate__round",
    "candidate__parent_index",
    "candidate__filename",
    "candidate__reported_outcome",
    "candidate__reported_speedup",
    "candidate__reported_speedup_lo",
    "candidate__reported_speedup_hi",
    "candidate__workload__wid",
    "candidate__workload__costs",
    "hardware__slug",
)
