"""Read-only catalogue: workloads, hardware targets, XLA baselines and expert references."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import permissions, viewsets

from catalog.lookup import find_workload
from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
from portal.api.filters import BaselineFilter, ExpertFilter, WorkloadFilter
from portal.api.serializers import (
    BaselineSerializer,
    ExpertSerializer,
    HardwareSerializer,
    WorkloadDetailSerializer,
    WorkloadSerializer,
)


@extend_schema_view(
    list=extend_schema(summary="List the workloads", tags=["catalogue"]),
    retrieve=extend_schema(
        summary="A workload with shapes, params and reference source",
        tags=["catalogue"],
        parameters=[
            OpenApiParameter(
                "id", OpenApiTypes.STR, OpenApiParameter.PATH, description="ID (12p), slug or public folder name"
            )
        ],
    ),
)
class WorkloadViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Workload.objects.all()
    permission_classes = [permissions.AllowAny]
    filterset_class = WorkloadFilter
    lookup_field = "wid"
    lookup_url_kwarg = "id"
    lookup_value_regex = "[^/]+"

    def get_serializer_class(self):
        return WorkloadDetailSerializer if self.action == "retrieve" else WorkloadSerializer

    def get_queryset(self):
        qs = super().get_queryset()
        if self.action == "list":
            qs = qs.defer(
                "reference_source",
                "starter_source",
                "shapes",
                "costs",
                "profiles",
                "upstream",
                "deviations",
                "null_audit",
            )
        return qs

    def get_object(self):
        name = self.kwargs[self.lookup_url_kwarg]
        obj = find_workload(name)
        if obj is None:
            raise Http404(f"No workload named {name!r}.")
        self.check_object_permissions(self.request, obj)
        return obj


@extend_schema_view(
    list=extend_schema(summary="List the hardware targets", tags=["catalogue"]),
    retrieve=extend_schema(summary="A hardware target", tags=["catalogue"]),
)
class HardwareViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = HardwareTarget.objects.all()
    serializer_class = HardwareSerializer
    permission_classes = [permissions.AllowAny]
    lookup_field = "slug"
    filterset_fields = ["platform", "profile"]


@extend_schema_view(
    list=extend_schema(summary="XLA baseline times", tags=["catalogue"]),
    retrieve=extend_schema(summary="One XLA baseline time", tags=["catalogue"]),
)
class BaselineViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Baseline.objects.select_related("workload", "hardware").order_by(
        "workload__level", "workload__number", "hardware__slug", "id"
    )
    serializer_class = BaselineSerializer
    permission_classes = [permissions.AllowAny]
    filterset_class = BaselineFilter


@extend_schema_view(
    list=extend_schema(summary="Hand-tuned expert references", tags=["catalogue"]),
    retrieve=extend_schema(summary="One expert reference", tags=["catalogue"]),
)
class ExpertViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = ExpertReference.objects.select_related("workload", "hardware").order_by(
        "workload__level", "workload__number", "hardware__slug"
    )
    serializer_class = ExpertSerializer
    permission_classes = [permissions.AllowAny]
    filterset_class = ExpertFilter
