"""Leaderboard API (mounted at /api/v1/leaderboard/ by portal.api_urls): the leaderboard of a
hardware target and workload set at budget N (and fast_p's p), and one submission's
per-workload aggregates. Public submissions only, except a submission's own team and staff."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from jaxbench.metrics.curves import set_values, unpack_curves, with_upstream
from jaxbench.workloads.sets import SET_NAMES
from leaderboard.data import SORTS, Query, leaderboard_data, set_members
from leaderboard.models import SubmissionSummary, WorkloadResult
from leaderboard.study import PUBLISHED_RESULTS
from leaderboard.versions import earlier_versions
from submissions.models import Submission


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True)
    tied = serializers.BooleanField()
    submission = serializers.IntegerField()
    team = serializers.CharField()
    method = serializers.CharField()
    model = serializers.CharField(allow_blank=True)
    framework = serializers.CharField(allow_blank=True)
    kind = serializers.CharField()
    sampling = serializers.CharField()
    provenance = serializers.ChoiceField(choices=["verified", "partial", "self-reported"])
    solved = serializers.FloatField()
    set_size = serializers.IntegerField()
    correctness = serializers.FloatField(allow_null=True, help_text="per-sample correctness (all samples)")
    geomean = serializers.FloatField(help_text="floored geometric-mean speedup at budget N")
    geomean_low = serializers.FloatField()
    geomean_high = serializers.FloatField()
    ugeomean = serializers.FloatField(
        allow_null=True,
        help_text="unfloored geomean of the best speedups over the solved workloads (None: none solved); "
        "breaks ties of the floored one",
    )
    ugeomean_low = serializers.FloatField(allow_null=True)
    ugeomean_high = serializers.FloatField(allow_null=True)
    fast = serializers.FloatField(help_text="fast_p@N")
    attempted = serializers.IntegerField(help_text="workloads of the set with at least one evaluated kernel")
    upstream = serializers.FloatField(
        allow_null=True,
        help_text="the public suite's own score: geomean over the attempted workloads only, each floored at 1 "
        "(null below the full budget, or when nothing was attempted)",
    )
    expert_pct = serializers.FloatField(allow_null=True, help_text="floored geomean / experts' on the expert set")
    tokens_per_solved = serializers.FloatField(allow_null=True)
    cost_per_solved = serializers.FloatField(allow_null=True)
    fast_per_dollar = serializers.FloatField(
        allow_null=True, help_text="fast@N over the cost the trace reports (null: no cost reported, or $0)"
    )
    date = serializers.CharField()
    n_samples = serializers.IntegerField()
    candidates_total = serializers.IntegerField()
    jax_version = serializers.CharField(allow_blank=True)
    harness_version = serializers.CharField(allow_blank=True)
    earlier_versions = serializers.IntegerField(
        help_text="evaluations of an earlier workload or harness version: kept, not counted in this row"
    )
    versions_used = serializers.DictField(
        help_text="with ?versions= other than current: per workload whose result comes from an earlier version, "
        "{workload_version, harness_version, current_workload_version, current_harness_version}; {} otherwise"
    )
    version_note = serializers.CharField(
        allow_blank=True, help_text="'2 workloads from an earlier version: 12p (v1), 8p (harness 1.0.0)', or ''"
    )
    hardware = serializers.CharField()
    workload_set = serializers.CharField()
    url = serializers.CharField()


class ReferenceRowSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="xla or expert")
    team = serializers.CharField()
    method = serializers.CharField()
    geomean = serializers.FloatField()
    ugeomean = serializers.FloatField(allow_null=True)
    upstream = serializers.FloatField(allow_null=True, help_text="the public suite's own score (full budget)")
    solved = serializers.FloatField(allow_null=True)
    fast = serializers.FloatField()
    note = serializers.CharField()


class LeaderboardSerializer(serializers.Serializer):
    meta = serializers.DictField()
    rows = LeaderboardRowSerializer(many=True)
    references = ReferenceRowSerializer(many=True)
    self_reported = LeaderboardRowSerializer(many=True)
    in_progress = LeaderboardRowSerializer(many=True)
    published_results = serializers.ListField(
        child=serializers.DictField(), help_text="reported by the source study, not evaluated here"
    )


class WorkloadAggregateSerializer(serializers.Serializer):
    workload = serializers.CharField()
    n_samples = serializers.IntegerField()
    n_correct = serializers.IntegerField()
    n_faster = serializers.IntegerField()
    n_tie = serializers.IntegerField(help_text="correct samples within noise of XLA (never counted faster)")
    best_speedup = serializers.FloatField(allow_null=True, help_text="the best sample's point speedup")
    best_low = serializers.FloatField(allow_null=True)
    best_high = serializers.FloatField(allow_null=True)
    best_before_intervals = serializers.BooleanField(
        help_text="the best sample was timed before intervals existed: best_low/high are its timing spread"
    )
    best_index = serializers.IntegerField(allow_null=True)
    first_correct_index = serializers.IntegerField(allow_null=True)
    first_faster_index = serializers.IntegerField(allow_null=True)
    counts = serializers.DictField(child=serializers.IntegerField())
    progression = serializers.ListField(child=serializers.ListField())


class SubmissionAggregatesSerializer(serializers.Serializer):
    submission = serializers.IntegerField()
    hardware = serializers.CharField()
    source = serializers.CharField()
    provenance = serializers.CharField()
    mode = serializers.CharField()
    candidates_total = serializers.IntegerField()
    n_samples = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField())
    jax_versions = serializers.ListField(child=serializers.CharField())
    harness_versions = serializers.ListField(child=serializers.CharField())
    sets = serializers.DictField(
        help_text="per workload set at budget N: size, solved, geomean, low, high, fast, "
        "ugeomean, ulow, uhigh (unfloored, over the solved workloads), attempted (workloads with an evaluated "
        "kernel) and upstream (the public suite's own score, over the attempted ones; null below the full budget)"
    )
    workloads = WorkloadAggregateSerializer(many=True)
    workload_versions = serializers.DictField(
        help_text="results under earlier workload versions (kept, never ranked): earlier, workloads, "
        "rescored, note ('3 of 6 workloads evaluated under an earlier version'), rows"
    )


_PARAMS = [
    OpenApiParameter("hardware", str, description="hardware target slug (default: most published submissions)"),
    OpenApiParameter("set", str, enum=list(SET_NAMES), description="workload set (default all)"),
    OpenApiParameter("n", str, description="sample budget N per workload: an integer, or 'all' (default)"),
    OpenApiParameter("p", float, description="fast_p threshold (default 1.0)"),
    OpenApiParameter("sort", str, enum=[s for k in SORTS for s in (k, f"-{k}")], description="sort key"),
    OpenApiParameter("method", str, description="only this method (case-insensitive)"),
    OpenApiParameter("model", str, description="only this model (case-insensitive)"),
    OpenApiParameter(
        "versions",
        str,
        description="current (default: each workload's current version under the current harness, comparable), "
        "all (each workload's best result whatever version it was measured under: rows flagged, not comparable), "
        "or harness-X for an earlier harness X (e.g. harness-1.0.0); meta.comparable says which",
    ),
]

_ROW_FIELDS = set(LeaderboardRowSerializer().fields)


def _clean(row):
    return {k: v for k, v in row.items() if k in _ROW_FIELDS}


class LeaderboardAPIView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=_PARAMS,
        responses=LeaderboardSerializer,
        tags=["leaderboard"],
        summary="Leaderboard of one hardware target and workload set at budget N",
    )
    def get(self, request):
        q = Query.from_params(request.query_params)
        if q is None:
            raise Http404("no hardware target is configured")
        data = leaderboard_data(q)
        return Response(
            {
                "meta": data["meta"],
                "rows": [_clean(r) for r in data["rows"]],
                "references": data["references"],
                "self_reported": [_clean(r) for r in data["self_reported"]],
                "in_progress": [_clean(r) for r in data["in_progress"]],
                "published_results": PUBLISHED_RESULTS,
            }
        )


class SubmissionAggregatesAPIView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("n", str, description="budget N ('all' by default)"),
            OpenApiParameter("source", str, enum=["evaluated", "reported"]),
        ],
        responses=SubmissionAggregatesSerializer(many=True),
        tags=["leaderboard"],
        summary="A submission's per-workload aggregates (per hardware target and source)",
    )
    def get(self, request, pk: int):
        sub = Submission.objects.visible_to(request.user).filter(pk=pk).first()
        if sub is None:
            raise Http404("submission not found")
        n = request.query_params.get("n")
        try:
            n = None if n in (None, "", "all") else max(0, int(n))
        except ValueError:
            n = None
        members = set_members()
        summaries = SubmissionSummary.objects.filter(submission=sub).select_related("hardware")
        if request.query_params.get("source") in ("evaluated", "reported"):
            summaries = summaries.filter(source=request.query_params["source"])
        summaries = list(summaries)
        versions = earlier_versions(sub if any(s.earlier_versions for s in summaries) else None)
        out = []
        for s in summaries:
            workloads = []
            for r in WorkloadResult.objects.filter(summary=s).select_related("workload"):
                a = r.aggregate
                workloads.append(
                    {
                        "workload": r.workload.wid,
                        "n_samples": r.n_samples,
                        "n_correct": r.n_correct,
                        "n_faster": r.n_faster,
                        "n_tie": r.n_tie,
                        "best_speedup": r.best_speedup,
                        "best_low": r.best_low,
                        "best_high": r.best_high,
                        "best_before_intervals": r.best_before_intervals,
                        "best_index": r.best_index,
                        "first_correct_index": r.first_correct_index,
                        "first_faster_index": r.first_faster_index,
                        "counts": a.get("counts", {}),
                        "progression": a.get("progression", []),
                    }
                )
            sets = {
                name: with_upstream(
                    set_values(unpack_curves(getattr(s, f"curves_{name}")), len(members[name]), n),
                    getattr(s, f"attempted_{name}"),
                    full_budget=n is None,
                )
                for name in SET_NAMES
            }
            out.append(
                {
                    "submission": sub.pk,
                    "hardware": s.hardware.slug,
                    "source": s.source,
                    "provenance": s.provenance,
                    "mode": s.mode,
                    "candidates_total": s.candidates_total,
                    "n_samples": s.n_samples,
                    "counts": s.counts,
                    "jax_versions": s.jax_versions,
                    "harness_versions": s.harness_versions,
                    "sets": sets,
                    "workloads": workloads,
                    "workload_versions": versions,
                }
            )
        return Response(out)
