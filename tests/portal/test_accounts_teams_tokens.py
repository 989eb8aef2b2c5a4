"""Account, team and token flows through Django's test client, and Bearer auth in DRF."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from submissions.models import ApiToken, Membership, Team

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def locmem_mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def signup(client, username="ada", email="ada@example.org", password="correct-horse-battery-9"):
    return client.post(
        reverse("signup"), {"username": username, "email": email, "password1": password, "password2": password}
    )


def test_signup_logs_in_and_rejects_duplicates(client):
    r = signup(client)
    assert r.status_code == 302 and r["Location"] == reverse("account")
    assert client.get(reverse("account")).status_code == 200
    client.logout()
    r = signup(client, username="ada2", email="ADA@example.org")
    assert r.status_code == 200
    assert "already exists" in r.content.decode()
    assert get_user_model().objects.count() == 1


def test_signup_rejects_weak_password(client):
    r = client.post(
        reverse("signup"), {"username": "bob", "email": "b@example.org", "password1": "123", "password2": "123"}
    )
    assert r.status_code == 200 and "too short" in r.content.decode()
    assert not get_user_model().objects.exists()


def test_login_logout_and_password_change(client):
    signup(client)
    client.post(reverse("logout"))
    assert client.get(reverse("account")).status_code == 302
    assert client.post(reverse("login"), {"username": "ada", "password": "wrong"}).status_code == 200
    r = client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery-9"})
    assert r.status_code == 302
    r = client.post(
        reverse("password_change"),
        {
            "old_password": "correct-horse-battery-9",
            "new_password1": "another-long-secret-7",
            "new_password2": "another-long-secret-7",
        },
    )
    assert r.status_code == 302
    client.post(reverse("logout"))
    assert client.login(username="ada", password="another-long-secret-7")


def test_password_reset_sends_a_working_link(client):
    signup(client)
    client.post(reverse("logout"))
    r = client.post(reverse("password_reset"), {"email": "ada@example.org"})
    assert r.status_code == 302 and len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    r = client.get(link, follow=True)
    assert r.status_code == 200
    set_url = r.redirect_chain[-1][0] if r.redirect_chain else link
    r = client.post(set_url, {"new_password1": "reset-password-long-1", "new_password2": "reset-password-long-1"})
    assert r.status_code == 302
    assert client.login(username="ada", password="reset-password-long-1")


def test_team_create_join_remove(client):
    signup(client)
    r = client.post(reverse("submissions:team-create"), {"name": "Kernel Crew", "description": "we tile"})
    team = Team.objects.get(name="Kernel Crew")
    assert r.status_code == 302 and team.is_owner(get_user_model().objects.get(username="ada"))
    # A duplicate name is refused with a message.
    r = client.post(reverse("submissions:team-create"), {"name": "kernel crew"})
    assert r.status_code == 200 and "already exists" in r.content.decode()

    from django.test import Client

    bob = Client()
    signup(bob, "bob", "bob@example.org")
    # the join link shows the team, the POST joins it
    assert team.name in bob.get(reverse("submissions:team-join-code", args=[team.join_code])).content.decode()
    r = bob.post(reverse("submissions:team-join"), {"code": team.join_code})
    assert r.status_code == 302 and team.is_member(get_user_model().objects.get(username="bob"))
    # a bad code is explained
    r = bob.post(reverse("submissions:team-join"), {"code": "nope"})
    assert "No team has this join code" in r.content.decode()
    bob_user = get_user_model().objects.get(username="bob")
    # members cannot remove others; owners can
    ada_user = get_user_model().objects.get(username="ada")
    bob.post(reverse("submissions:team-remove-member", args=[team.slug, ada_user.pk]))
    assert team.is_member(ada_user)
    client.post(reverse("submissions:team-remove-member", args=[team.slug, bob_user.pk]))
    assert not team.is_member(bob_user)
    # the team page is private to members
    assert bob.get(reverse("submissions:team-detail", args=[team.slug])).status_code == 404


def test_rotating_the_code_invalidates_the_old_link(client):
    signup(client)
    client.post(reverse("submissions:team-create"), {"name": "Rotors"})
    team = Team.objects.get(name="Rotors")
    old = team.join_code
    client.post(reverse("submissions:team-rotate-code", args=[team.slug]))
    team.refresh_from_db()
    assert team.join_code != old
    from django.test import Client

    eve = Client()
    signup(eve, "eve", "eve@example.org")
    r = eve.post(reverse("submissions:team-join"), {"code": old})
    assert "No team has this join code" in r.content.decode()
    assert not Membership.objects.filter(user__username="eve").exists()


def test_last_owner_cannot_be_removed(client):
    signup(client)
    client.post(reverse("submissions:team-create"), {"name": "Solo"})
    team = Team.objects.get(name="Solo")
    ada = get_user_model().objects.get(username="ada")
    client.post(reverse("submissions:team-remove-member", args=[team.slug, ada.pk]))
    assert team.is_owner(ada)


def test_token_shown_once_stored_hashed_and_revocable(client):
    signup(client)
    r = client.post(reverse("token-create"), {"name": "agent-runner"})
    raw = re.search(r'id="new-token">(jxb_[^<]+)<', r.content.decode()).group(1)
    token = ApiToken.objects.get(name="agent-runner")
    assert raw not in (token.digest, token.prefix) and token.digest != raw
    assert raw not in client.get(reverse("account")).content.decode()  # never shown again

    from rest_framework.test import APIClient

    api = APIClient()
    assert api.get("/api/v1/me/").status_code in (401, 403)
    r = api.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert r.status_code == 200 and r.json()["username"] == "ada" and r.json()["token"] == "agent-runner"
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert api.get("/api/v1/me/", HTTP_AUTHORIZATION="Bearer jxb_wrong").status_code == 401
    assert api.get("/api/v1/me/", HTTP_AUTHORIZATION="Bearer").status_code == 401

    client.post(reverse("token-revoke", args=[token.pk]))
    r = api.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


def test_pages_render_without_login(client):
    for url in ("/", "/docs/", "/accounts/login/", "/accounts/signup/", "/health/", "/api/docs/", "/api/redoc/"):
        r = client.get(url)
        assert r.status_code == 200, url
    home = client.get("/").content.decode()
    assert "13/50" in home and "1.36x" in home and "reported, not evaluated here" in home
    docs = client.get("/docs/").content.decode()
    for phrase in (
        "atol = rtol = 10",
        "|XLA − exact|",
        "side by side",
        "device-side event",
        "95% interval",
        "correct_tie",
        "floored",
        "fast<sub>p</sub>@N",
        "compile_error",
        "correct_faster",
        "rejected",
    ):
        assert phrase in docs


def test_staff_get_the_admin(client):
    get_user_model().objects.create_superuser("root", "r@example.org", "pw-long-enough-1")
    client.login(username="root", password="pw-long-enough-1")
    assert client.get("/admin/").status_code == 200


def test_login_is_rate_limited(client, settings):
    settings.AXES_ENABLED = True
    get_user_model().objects.create_user("mallory-target", "t@example.org", "the-real-password-1")
    for _ in range(4):
        r = client.post(reverse("login"), {"username": "mallory-target", "password": "guess"})
        assert r.status_code == 200
    assert client.post(reverse("login"), {"username": "mallory-target", "password": "guess"}).status_code == 429
    r = client.post(reverse("login"), {"username": "mallory-target", "password": "the-real-password-1"})
    assert r.status_code == 429 and "Too many failed" in r.content.decode()
