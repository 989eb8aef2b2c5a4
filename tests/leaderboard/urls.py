"""The portal's URLs plus the leaderboard API at the path portal.api_urls gives it."""
from django.urls import include, path

urlpatterns = [
    path("api/v1/leaderboard/", include("leaderboard.api_urls")),
    path("", include("portal.urls")),
]
