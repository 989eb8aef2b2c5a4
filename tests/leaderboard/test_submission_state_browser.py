"""My submissions, a submission's page and a trace's sample view in Chromium at 1280 and 390 px:
each state's badge and its reason a click away (the <details> opens), the claimed column apart,
nothing wider than the page but the scrolling tables; screenshots under artifacts/screenshots/."""

from __future__ import annotations

import pytest

from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.chromium import SCREENSHOTS, chromium_page
from tests.leaderboard.conftest import make_submission, make_team

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
    client.force_login(users["alice"])
    cookie = {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}
    with chromium_page(live_server, monkeypatch, width, 900, cookies=[cookie]) as pg:
        errors = pg.js_errors
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
