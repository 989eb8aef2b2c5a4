"""Production settings and the protections they turn on: ``check --deploy`` is clean under the
production environment; CSRF is enforced on every form POST and on session-authenticated API
writes (Bearer-token requests need none); cookies are HttpOnly (and Secure under HTTPS); every
response carries nosniff, X-Frame-Options DENY and a Referrer-Policy, and HSTS under HTTPS.

The HTTPS behaviour is tested with the values ``portal/settings.py`` itself computes under the
production environment (the module is evaluated afresh with that environment), applied to the
running test settings."""

import json
import os
import pathlib
import re
import runpy
import secrets
import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from tests.portal.security.conftest import counts
from tests.submissions.conftest import kernel

ROOT = pathlib.Path(__file__).resolve().parents[3]
HOST = "portal.example.org"


def production_env(tmp_path, https=True) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_VERSION", "DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    env.update(
        {
            "DJANGO_DEBUG": "0",
            "DJANGO_HTTPS": "1" if https else "0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
            "DJANGO_ALLOWED_HOSTS": HOST,
            "JAXBENCH_VAR_DIR": str(tmp_path / "var"),
            "DJANGO_SETTINGS_MODULE": "portal.settings",
        }
    )
    return env


def check_deploy(env):
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_under_the_production_environment(tmp_path):
    env = production_env(tmp_path)
    assert len(env["DJANGO_SECRET_KEY"]) >= 50
    r = check_deploy(env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no issues" in r.stdout


def test_check_deploy_fails_without_https(tmp_path):
    """The control: the check does look (plain HTTP leaves cookies and HSTS off)."""
    r = check_deploy(production_env(tmp_path, https=False))
    assert r.returncode != 0
    for code in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert code in r.stdout + r.stderr, r.stdout + r.stderr


SECURITY_SETTINGS = (
    "DEBUG",
    "ALLOWED_HOSTS",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_CONTENT_TYPE_NOSNIFF",
    "SECURE_REFERRER_POLICY",
    "X_FRAME_OPTIONS",
    "SESSION_COOKIE_SECURE",
    "SESSION_COOKIE_HTTPONLY",
    "CSRF_COOKIE_SECURE",
)


def settings_module_under(env: dict) -> dict:
    """The upper-case names ``portal/settings.py`` defines when run with ``env``."""
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        ns = runpy.run_path(str(ROOT / "portal" / "settings.py"))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {k: v for k, v in ns.items() if k.isupper()}


@pytest.fixture
def https_settings(tmp_path):
    values = settings_module_under(production_env(tmp_path))
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"] and values["SECURE_SSL_REDIRECT"]
    with override_settings(**{k: values[k] for k in SECURITY_SETTINGS if k in values}):
        yield values


def assert_security_headers(r, hsts: bool):
    assert r["X-Content-Type-Options"] == "nosniff"
    assert r["X-Frame-Options"] == "DENY"
    assert r["Referrer-Policy"] == "same-origin"
    if hsts:
        assert r["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    else:
        assert not r.has_header("Strict-Transport-Security")


@pytest.fixture
def user(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("carol", "carol@example.org", "pw-carol-long-1")


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/api/v1/workloads/", "/api/schema/", "/docs/"])
def test_security_headers_on_every_kind_of_response(client, db, path):
    r = client.get(path)
    assert r.status_code == 200, path
    assert_security_headers(r, hsts=False)


def test_security_headers_on_errors_too(client, db):
    assert_security_headers(client.get("/no-such-page/"), hsts=False)
    assert_security_headers(client.post("/api/v1/submissions/", {}), hsts=False)


def login(client, username="carol", password="pw-carol-long-1", **extra):
    """A real login through the form, with its CSRF token."""
    page = client.get("/accounts/login/", **{k: v for k, v in extra.items() if k != "HTTP_ORIGIN"})
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    r = client.post(
        "/accounts/login/", {"username": username, "password": password, "csrfmiddlewaretoken": token}, **extra
    )
    assert r.status_code == 302, r.content[:500]
    return r


def test_session_and_csrf_cookies_over_http(user):
    c = Client(enforce_csrf_checks=True)
    r = login(c)
    session = r.cookies["sessionid"]
    assert session["httponly"] and session["samesite"] == "Lax" and not session["secure"]


def test_https_settings_redirect_send_hsts_and_secure_cookies(user, https_settings):
    c = Client(enforce_csrf_checks=True, HTTP_HOST=HOST)
    r = c.get("/accounts/login/")
    assert r.status_code == 301 and r["Location"] == f"https://{HOST}/accounts/login/"
    r = c.get("/accounts/login/", secure=True)
    assert r.status_code == 200
    assert_security_headers(r, hsts=True)
    assert r.cookies["csrftoken"]["secure"]
    r = login(c, secure=True, HTTP_ORIGIN=f"https://{HOST}")  # browsers send Origin on POSTs
    assert_security_headers(r, hsts=True)
    session = r.cookies["sessionid"]
    assert session["secure"] and session["httponly"] and session["samesite"] == "Lax"
    # behind the TLS-terminating proxy
    r = c.get("/account/", HTTP_X_FORWARDED_PROTO="https")
    assert r.status_code == 200
    assert_security_headers(r, hsts=True)
    assert Client(HTTP_HOST="evil.example").get("/", secure=True).status_code == 400  # ALLOWED_HOSTS


def test_https_forms_refuse_a_foreign_origin_even_with_a_token(user, https_settings):
    c = Client(enforce_csrf_checks=True, HTTP_HOST=HOST)
    login(c, secure=True, HTTP_ORIGIN=f"https://{HOST}")
    page = c.get("/teams/new/", secure=True).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    r = c.post(
        "/teams/new/", {"name": "Evil", "csrfmiddlewaretoken": token}, secure=True, HTTP_ORIGIN="https://evil.example"
    )
    assert r.status_code == 403
    r = c.post("/teams/new/", {"name": "Evil", "csrfmiddlewaretoken": token}, secure=True)  # neither Origin nor Referer
    assert r.status_code == 403
    r = c.post(
        "/teams/new/", {"name": "Good", "csrfmiddlewaretoken": token}, secure=True, HTTP_ORIGIN=f"https://{HOST}"
    )
    assert r.status_code == 302
    from submissions.models import Team

    assert list(Team.objects.values_list("name", flat=True)) == ["Good"]


# -- CSRF on form POSTs ---------------------------------------------------------------------


@pytest.fixture
def world(catalog, member):
    from submissions import intake

    sub = intake.create_kernel_submission(member.team, member.user, "cpu", {"method": "M"}, [("12p.py", kernel())])
    return {"member": member, "submission": sub}


def state():
    from submissions.models import ApiToken, Membership, Submission, Team

    return (
        counts(),
        Team.objects.count(),
        Membership.objects.count(),
        ApiToken.objects.filter(revoked_at=None).count(),
        sorted(Submission.objects.values_list("pk", "published_at")),
    )


def form_posts(world):
    m, sub = world["member"], world["submission"]
    token_pk = m.user.api_tokens.get().pk
    return [
        ("/teams/new/", {"name": "Forged Team"}),
        ("/teams/join/", {"code": "x"}),
        (f"/teams/{m.team.slug}/leave/", {}),
        (f"/teams/{m.team.slug}/rotate-code/", {}),
        ("/account/tokens/new/", {"name": "forged"}),
        (f"/account/tokens/{token_pk}/revoke/", {}),
        (
            "/submit/",
            {
                "team": m.team.slug,
                "hardware": "cpu",
                "method": "Forged",
                "file_12p": SimpleUploadedFile("12p.py", kernel().encode()),
            },
        ),
        ("/submit/trace/", {"team": m.team.slug, "trace": SimpleUploadedFile("t.jsonl", b"{}\n")}),
        (f"/submissions/{sub.pk}/publish/", {}),
        (f"/submissions/{sub.pk}/withdraw/", {}),
        (
            "/accounts/password/change/",
            {
                "old_password": "pw-long-enough-1",
                "new_password1": "Forged-pass-9x!",
                "new_password2": "Forged-pass-9x!",
            },
        ),
        ("/accounts/logout/", {}),
    ]


def test_every_form_post_needs_the_csrf_token(world):
    c = Client(enforce_csrf_checks=True)
    c.force_login(world["member"].user)
    before = state()
    for path, data in form_posts(world):
        r = c.post(path, data)
        assert r.status_code == 403, (path, r.status_code)
        assert b"CSRF" in r.content, path
    assert state() == before
    assert c.get("/account/").status_code == 200  # still logged in, password unchanged


def test_anonymous_forms_need_the_csrf_token_too(user):
    c = Client(enforce_csrf_checks=True)
    assert c.post("/accounts/login/", {"username": "carol", "password": "pw-carol-long-1"}).status_code == 403
    assert (
        c.post(
            "/accounts/signup/",
            {"username": "x", "email": "x@example.org", "password1": "Long-pass-123!", "password2": "Long-pass-123!"},
        ).status_code
        == 403
    )
    assert c.post("/accounts/password/reset/", {"email": "carol@example.org"}).status_code == 403
    from django.contrib.auth import get_user_model

    assert get_user_model().objects.count() == 1


def test_form_posts_work_with_the_token(world):
    c = Client(enforce_csrf_checks=True)
    c.force_login(world["member"].user)
    page = c.get("/submit/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    r = c.post(
        "/submit/",
        {
            "team": world["member"].team.slug,
            "hardware": "cpu",
            "method": "Real",
            "file_12p": SimpleUploadedFile("12p.py", kernel().encode()),
            "csrfmiddlewaretoken": token,
        },
    )
    assert r.status_code == 302
    r = c.post("/account/tokens/new/", {"name": "ci", "csrfmiddlewaretoken": token})
    assert r.status_code == 200 and b"jxb_" in r.content


# -- the API: session writes need CSRF, Bearer writes do not ------------------------------------


def api_writes(world):
    sub = world["submission"]
    return [
        (
            "/api/v1/submissions/",
            json.dumps({"hardware": "cpu", "method": "m", "kernels": {"8p": kernel()}}),
            "application/json",
            201,
        ),
        (
            "/api/v1/submissions/trace/",
            (
                json.dumps(
                    {
                        "format": "jaxbench-trace/1",
                        "method": "m",
                        "model": "x",
                        "hardware": "cpu",
                        "sampling": "sequential",
                    }
                )
                + "\n"
                + json.dumps({"workload": "12p", "index": 0, "code": ""})
                + "\n"
            ).encode(),
            "application/x-ndjson",
            201,
        ),
        (f"/api/v1/submissions/{sub.pk}/publish/", b"", "application/json", 200),
        (f"/api/v1/submissions/{sub.pk}/withdraw/", b"", "application/json", 200),
    ]


def test_session_authenticated_api_writes_without_csrf_are_refused(world):
    c = Client(enforce_csrf_checks=True)
    c.force_login(world["member"].user)
    before = state()
    for path, body, ctype, _ in api_writes(world):
        r = c.post(path, body, content_type=ctype)
        assert r.status_code == 403 and "CSRF" in r.json()["detail"], (path, r.content)
    assert state() == before
    assert c.get("/api/v1/me/").json()["username"] == "mallory"  # reads are fine


def test_session_authenticated_api_writes_with_the_csrf_header_work(world):
    c = Client(enforce_csrf_checks=True)
    c.force_login(world["member"].user)
    c.get("/submit/")  # sets the csrftoken cookie
    token = c.cookies["csrftoken"].value
    for path, body, ctype, code in api_writes(world):
        r = c.post(path, body, content_type=ctype, HTTP_X_CSRFTOKEN=token)
        assert r.status_code == code, (path, r.content)


def test_bearer_token_api_writes_need_no_csrf(world):
    c = Client(enforce_csrf_checks=True)
    auth = world["member"].auth
    for path, body, ctype, code in api_writes(world):
        r = c.post(path, body, content_type=ctype, **auth)
        assert r.status_code == code, (path, r.content)
    # a bad token is refused outright, it does not fall back to a session
    c.force_login(world["member"].user)
    r = c.post(
        api_writes(world)[0][0],
        api_writes(world)[0][1],
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer jxb_forged",
    )
    assert r.status_code == 401
