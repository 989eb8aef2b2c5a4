"""Included by portal.api_urls at /api/v1/leaderboard/."""

from django.urls import path

from leaderboard.views.api import LeaderboardAPIView, SubmissionAggregatesAPIView

urlpatterns = [
    path("", LeaderboardAPIView.as_view(), name="api-leaderboard"),
    path("submissions/<int:pk>/", SubmissionAggregatesAPIView.as_view(), name="api-leaderboard-submission"),
]
