from django.urls import path

from leaderboard.views import leaderboard, submission, workload

urlpatterns = [
    path("leaderboard/", leaderboard.leaderboard, name="leaderboard"),
    path("submissions/<int:pk>/", submission.submission_detail, name="submission-detail"),
    path("submissions/<int:pk>/progress.json", submission.progress_json, name="submission-progress"),
    path("compare/", submission.compare, name="compare"),
    path("workloads/<slug:slug>/results.csv", workload.workload_results_export, {"fmt": "csv"},
         name="workload-results-csv"),
    path("workloads/<slug:slug>/results.json", workload.workload_results_export, {"fmt": "json"},
         name="workload-results-json"),
]
