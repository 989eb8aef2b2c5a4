from django.urls import include, path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from portal.api.accounts import MeView
from portal.api.catalog import BaselineViewSet, ExpertViewSet, HardwareViewSet, WorkloadViewSet
from portal.api.run_logs import EvaluationLog
from portal.api.schema import SchemaView  # (its module registers the Bearer auth in OpenAPI)
from portal.api.submissions import EvaluationList, SubmissionViewSet
from portal.api.test_runs import TestRunViewSet

router = SimpleRouter()
router.register("workloads", WorkloadViewSet, basename="api-workload")
router.register("hardware", HardwareViewSet, basename="api-hardware")
router.register("baselines", BaselineViewSet, basename="api-baseline")
router.register("experts", ExpertViewSet, basename="api-expert")
router.register("submissions", SubmissionViewSet, basename="api-submission")
router.register("test-runs", TestRunViewSet, basename="api-test-run")

urlpatterns = [
    path("schema/", SchemaView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path(
        "redoc/",
        SpectacularRedocView.as_view(url_name="api-schema", template_name="portal/api_redoc.html"),
        name="api-redoc",
    ),
    path("v1/me/", MeView.as_view(), name="api-me"),
    path("v1/submissions/<int:pk>/evaluations/", EvaluationList.as_view(), name="api-submission-evaluations"),
    path("v1/evaluations/<int:pk>/log/", EvaluationLog.as_view(), name="api-evaluation-log"),
    path("v1/leaderboard/", include("leaderboard.api_urls")),
    path("v1/", include(router.urls)),
]
