"""Every page that shows results: the leaderboard, the workloads with their results, a
submission's page and progress, the signed-in user's submissions and test runs, compare, and the
exports."""

from django.urls import path

from leaderboard.views import (
    compare,
    leaderboard,
    review,
    submission,
    submission_list,
    test_runs,
    workload_results,
    workloads,
)

app_name = "leaderboard"
urlpatterns = [
    path("leaderboard/", leaderboard.leaderboard, name="index"),
    path("submissions/", submission_list.submission_list, name="submission-list"),
    path("submissions/<int:pk>/", submission.submission_detail, name="submission-detail"),
    path("submissions/<int:pk>/progress.json", submission.progress_json, name="submission-progress"),
    path("submissions/<int:pk>/rescore/", review.rescore, name="submission-rescore"),
    path("compare/", compare.compare, name="compare"),
    # test runs (private evaluations): their owner's alone
    path("test-runs/", test_runs.test_run_list, name="test-run-list"),
    path("test-runs/<int:pk>/", test_runs.test_run_detail, name="test-run-detail"),
    # staff: verdicts held for review (TRUST.md 6)
    path("review/", review.review_list, name="review-list"),
    path("review/<int:pk>/", review.review_detail, name="review-detail"),
    path("workloads/", workloads.workload_list, name="workload-list"),
    path("workloads/<slug:slug>/", workloads.workload_detail, name="workload-detail"),
    path(
        "workloads/<slug:slug>/results.csv",
        workload_results.workload_results_export,
        {"fmt": "csv"},
        name="workload-results-csv",
    ),
    path(
        "workloads/<slug:slug>/results.json",
        workload_results.workload_results_export,
        {"fmt": "json"},
        name="workload-results-json",
    ),
]
