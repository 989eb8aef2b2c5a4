"""What a newcomer meets first: the home page on an empty database, the browser's favicon
request, and POST-only URLs opened with a GET."""

import re

import pytest

from tests.factories import member

pytestmark = pytest.mark.django_db


def test_home_page_on_an_empty_database_prints_no_none(client):
    r = client.get("/")
    assert r.status_code == 200
    # each tag a space: strip_tags would glue cells together ("kernels)Noneexpert")
    text = re.sub(r"<[^>]*>", " ", r.content.decode())
    assert not re.search(r"\bNone\b", text), [ln for ln in text.splitlines() if "None" in ln]
    # the study's row without a model (hand-tuned expert kernels) still shows
    assert "Tokamax (hand-tuned expert kernels)" in text


def test_favicon_is_linked_and_served(client):
    html = client.get("/").content.decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)"', html)
    assert icon and icon.group(1).endswith(".svg")
    r = client.get("/favicon.ico")
    assert r.status_code == 302 and r["Location"] == icon.group(1)
    assert client.get(icon.group(1)).status_code == 200


@pytest.mark.parametrize(
    "url, form_page",
    [
        ("/submit/trace/", "/submit/#trace"),
        ("/account/tokens/new/", "/account/"),
        ("/account/tokens/7/revoke/", "/account/"),
        ("/teams/kernel-crew/leave/", "/teams/kernel-crew/"),
        ("/teams/kernel-crew/rotate-code/", "/teams/kernel-crew/"),
        ("/teams/kernel-crew/members/3/remove/", "/teams/kernel-crew/"),
        ("/accounts/logout/", "/"),
    ],
)
def test_get_on_a_post_only_url_goes_to_its_form(client, url, form_page):
    user, team = member()
    assert team.slug == "kernel-crew"
    client.force_login(user)
    r = client.get(url)
    assert r.status_code == 302 and r["Location"] == form_page
    assert client.delete(url).status_code == 405
    # nothing happened: still logged in, still in the team
    assert client.get("/account/").status_code == 200 and team.is_member(user)
