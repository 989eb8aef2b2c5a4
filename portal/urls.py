from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from portal.views import accounts, pages
from submissions.views.post_only import post_only

urlpatterns = [
    path("", pages.home, name="home"),
    path("docs/", pages.docs, name="docs"),
    path("health/", pages.health, name="health"),
    path("favicon.ico", pages.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    # accounts
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    # POST-only since Django 5; a GET (a typed or bookmarked URL) goes home
    path("accounts/logout/", post_only(lambda request: "/")(auth_views.LogoutView.as_view()), name="logout"),
    path("accounts/password/change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", auth_views.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(), name="password_reset_confirm"
    ),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("account/", accounts.account, name="account"),
    path("account/tokens/new/", accounts.token_create, name="token-create"),
    path("account/tokens/<int:pk>/revoke/", accounts.token_revoke, name="token-revoke"),
    # the other apps
    path("", include("catalog.urls")),
    path("", include("submissions.urls")),
    path("", include("leaderboard.urls")),
    path("api/", include("portal.api_urls")),
]
