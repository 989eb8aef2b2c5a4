"""The whole path of a new user in a real browser: sign up, create a team, create an API token
(copied from the page that shows it once), then submit the example 12p kernel through the
/submit/ form and land on the submission's page; a bad file is refused with its error next to
its row and in a summary on top of the page linking it. Screenshots:
artifacts/screenshots/submit-*.png."""

import json
import pathlib
import urllib.request

import pytest

from tests.browser.conftest import SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jaxbench" / "kernels" / "examples" / "12p-rmsnorm.py"
PASSWORD = "Browser-pass-2024!"


@pytest.fixture
def workloads(db):
    """Hardware targets and the 12p workload row: the form has a row per workload."""
    from catalog.registry_sync import sync_hardware
    from tests.factories import workload

    sync_hardware()
    return workload("12p")


def sign_up_and_make_team(page, username="grace"):
    page.goto(page.base + "/accounts/signup/")
    page.fill("#id_username", username)
    page.fill("#id_email", f"{username}@example.org")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("form.card button[type=submit]")
    page.wait_for_url("**/account/")
    page.click("a[href='/teams/new/']")
    page.wait_for_url("**/teams/new/")
    page.fill("#id_name", f"{username.title()} Kernels")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"**/teams/{username}-kernels/")


def api_me(base, token):
    req = urllib.request.Request(base + "/api/v1/me/", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.load(r)


def test_sign_up_team_token_and_submit_a_kernel(page, workloads, no_broker):
    from submissions.models import ApiToken, Submission

    sign_up_and_make_team(page)

    # an API token, shown once
    page.goto(page.base + "/account/")
    page.fill("#id_name", "my laptop")
    page.click("form[action='/account/tokens/new/'] button[type=submit]")
    token = page.inner_text("#new-token").strip()
    assert token.startswith("jxb_") and len(token) > 30
    me = api_me(page.base, token)
    assert me["username"] == "grace" and me["teams"][0]["slug"] == "grace-kernels" and me["token"] == "my laptop"
    page.goto(page.base + "/account/")
    assert token not in page.content() and ApiToken.objects.get().prefix in page.content()

    # the submit form, with a row per workload
    page.goto(page.base + "/submit/")
    assert page.is_visible("#kernel-form") and page.is_visible("#row-12p")
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != "" and page.evaluate(
        "Array.from(document.styleSheets).some(s => s.href && s.href.includes('/static/'))"
    )
    page.fill("#id_method", "Hand-written")
    page.fill("#id_model", "Human")
    page.set_input_files("#id_file_12p", str(EXAMPLE))
    page.shot("submit-form")
    page.click("#kernel-form button[type=submit]")
    page.wait_for_url("**/submissions/*/")
    sub = Submission.objects.get()
    assert page.url.rstrip("/").endswith(f"/submissions/{sub.pk}")
    assert f"Submission #{sub.pk} received" in page.content()
    assert sub.team.slug == "grace-kernels" and sub.created_by.username == "grace" and sub.method == "Hand-written"
    cand = sub.candidates.get()
    assert cand.workload.wid == "12p" and cand.code == EXAMPLE.read_text() and cand.filename == "12p-rmsnorm.py"
    assert no_broker and all(q == "eval.cpu" for _, q in no_broker)  # queued after the commit
    page.shot("submit-landed")
    assert not page.js_errors, page.js_errors


def test_a_bad_file_is_refused_next_to_its_row(page, workloads, tmp_path):
    from submissions.models import Submission

    sign_up_and_make_team(page, "linus")
    bad = tmp_path / "12p-broken.py"
    bad.write_text("import jax\n\ndef workload(x:\n    return x\n")
    page.goto(page.base + "/submit/")
    page.fill("#id_method", "Hand-written")
    page.set_input_files("#id_file_12p", str(bad))
    page.click("#kernel-form button[type=submit]")
    page.wait_for_selector("#id_file_12p_error")
    assert page.url.endswith("/submit/")
    error = page.inner_text("#row-12p #id_file_12p_error")
    assert "12p-broken.py" in error and "not valid Python: line 3" in error
    assert page.input_value("#id_method") == "Hand-written"  # the form keeps what was typed
    # the summary on top of the page, in view without scrolling, links the field in error
    summary = page.locator("#kernel-error-summary")
    box = summary.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]
    assert "12p-broken.py" in summary.inner_text() and "not valid Python" in summary.inner_text()
    page.shot("submit-error-summary")
    summary.locator("a[href='#id_file_12p']").click()
    field = page.locator("#id_file_12p").bounding_box()
    assert 0 <= field["y"] <= page.viewport_size["height"]  # the link took us to the field
    page.locator("#row-12p").scroll_into_view_if_needed()
    page.shot("submit-error")
    page.locator("#row-12p").screenshot(path=str(SCREENSHOTS / "submit-error-row.png"))
    # a file that is not Python text at all
    page.set_input_files("#id_file_12p", {"name": "12p.py", "mimeType": "text/x-python", "buffer": b"\xff\xfe\x00bad"})
    page.click("#kernel-form button[type=submit]")
    page.wait_for_selector("#id_file_12p_error")
    assert "not UTF-8" in page.inner_text("#row-12p #id_file_12p_error")
    assert Submission.objects.count() == 0
    assert not page.js_errors, page.js_errors
