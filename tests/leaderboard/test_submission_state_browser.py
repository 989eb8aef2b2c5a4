"""My submissions, a submission's page and a trace's sample view in Chromium at 1280 and 390 px:
each state's badge and its reason a click away (the <details> opens), the claimed column apart,
nothing wider than the page but the scrolling tables; screenshots under artifacts/screenshots/."""

from __future__ import annotations

import os

import pytest

from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.conftest import make_submission, make_team
from tests.leaderboard.test_browser import ARGS, CHROMIUM, SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def setup(workloads, hardware, users):
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    w1, w2 = workloads[0], workloads[1]
    out = {}
    for name, samples, kw in [
        ("failed", {w1: [("compile_error", None)]}, {}),
        ("partial", {w1: [("correct_faster", 1.5, (1.2, 1.8))], w2: [("incorrect", None)]}, {}),
        ("measured", {w1: [("correct_faster", 1.5, (1.2, 1.8))]}, {}),
        ("claims", {w1: [("correct_faster", 1.1), ("correct_faster", 1.1)]}, {"evaluate": False, "reported": True}),
    ]:
        s = make_submission(team, cpu, samples, published=False, kind="trace" if name == "claims" else "kernels", **kw)
        rebuild_submission(s)
        out[name] = s
    return out


@pytest.mark.parametrize("width", [1280, 390])
def test_states_and_claims_render_in_chromium(setup, users, live_server, client, monkeypatch, width):
    if not os.path.exists(CHROMIUM):
        pytest.skip("no Chromium at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    client.force_login(users["alice"])
    cookie = client.cookies["sessionid"].value
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": cookie, "url": live_server.url}])
        pg = context.new_page()
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(f"{live_server.url}/submissions/")
        failed_row = pg.locator(f"#submission-{setup['failed'].pk}")
        assert failed_row.locator('[data-state="failed"]').inner_text() == "failed"
        assert not failed_row.locator(".state-reason p").first.is_visible()
        failed_row.locator(".state-reason summary").click()
        assert "1 compile error" in failed_row.locator(".state-reason p").first.inner_text()
        color = failed_row.locator('[data-state="failed"]').evaluate("e => getComputedStyle(e).backgroundColor")
        assert color != "rgb(220, 243, 227)"  # never the green of done
        pg.screenshot(path=str(SCREENSHOTS / f"my-submissions-states-{width}.png"), full_page=True)

        pg.goto(f"{live_server.url}/submissions/{setup['partial'].pk}/")
        assert "partial" in pg.locator("#state").inner_text()
        pg.locator('#state a[href="#failures"]').click()
        assert pg.locator("#failures").is_visible()
        pg.screenshot(path=str(SCREENSHOTS / f"submission-partial-{width}.png"), full_page=True)

        pg.goto(f"{live_server.url}/submissions/{setup['claims'].pk}/")
        assert pg.locator("#claimed").is_visible() and pg.locator("#not-measured").is_visible()
        pg.screenshot(path=str(SCREENSHOTS / f"submission-claims-{width}.png"), full_page=True)
        pg.goto(f"{live_server.url}/submissions/{setup['claims'].pk}/?workload=1p")
        claimed = pg.locator("#samples-table td.claimed").first
        assert "correct_faster 1.10x" in claimed.inner_text()
        border = claimed.evaluate("e => getComputedStyle(e).borderLeftStyle")
        assert border == "dashed"
        pg.screenshot(path=str(SCREENSHOTS / f"trace-claims-{width}.png"), full_page=True)
        # nothing but the scrolling tables is wider than the viewport
        overflow = pg.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1
        assert errors == []
        context.close()
        browser.close()
