"""Test runs in Chromium at 1280 and 390 px: the board's highlighted preview row for its owner,
the test run's page with its label, verdicts and preview, the list and the new-test-run form;
nothing wider than the page but the scrolling tables; screenshots under artifacts/screenshots/."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from leaderboard.aggregates.refresh import rebuild_submission
from submissions.models import Submission
from tests.leaderboard.chromium import SCREENSHOTS, chromium_page
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABEL = "test run — private, not on the board"


@pytest.fixture
def setup(workloads, hardware, users):
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    for speedup, n in ((2.0, 8), (1.2, 20)):
        s = make_submission(
            team, cpu, {w: [("correct_faster", speedup, (speedup * 0.9, speedup * 1.1))] for w in workloads[:n]}
        )
        rebuild_submission(s)
    run = make_submission(
        team,
        cpu,
        {w: [("correct_faster", 1.5, (1.4, 1.6))] for w in workloads[:12]} | {workloads[12]: [("incorrect", None)]},
        kind="kernels",
        method="",
        published=False,
    )
    Submission._base_manager.filter(pk=run.pk).update(
        test_run=True, created_by=users["alice"], expires_at=timezone.now() + datetime.timedelta(days=7)
    )
    run = Submission.test_runs.get(pk=run.pk)
    rebuild_submission(run)
    return run


@pytest.mark.parametrize("width", [1280, 390])
def test_test_run_pages_and_preview_render(setup, users, live_server, client, monkeypatch, width):
    run = setup
    client.force_login(users["alice"])
    cookie = {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}
    with chromium_page(live_server, monkeypatch, width, 900, cookies=[cookie]) as pg:
        pg.goto(f"{live_server.url}/leaderboard/?hardware=cpu")
        row = pg.locator(f'#test-run-preview tr.preview-row[data-test-run="{run.pk}"]')
        # its interval overlaps the first row's: tied with it, as the board marks ties
        assert row.is_visible() and "would be 1 ≈ of 3" in row.inner_text() and LABEL in row.inner_text()
        color = row.locator("td").first.evaluate("e => getComputedStyle(e).backgroundColor")
        assert color == "rgb(255, 244, 214)"  # highlighted
        assert pg.locator(f'#leaderboard tr[data-submission="{run.pk}"]').count() == 0  # never a board row
        pg.screenshot(path=str(SCREENSHOTS / f"board-test-run-preview-{width}.png"), full_page=False)
        overflow = pg.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1

        for path, name in (
            (f"/test-runs/{run.pk}/", "test-run"),
            ("/test-runs/", "test-run-list"),
            ("/test-runs/new/", "test-run-new"),
        ):
            pg.goto(f"{live_server.url}{path}")
            assert LABEL in pg.locator("h1").inner_text()
            pg.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)
            overflow = pg.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, (path, overflow)
        pg.goto(f"{live_server.url}/test-runs/{run.pk}/")
        assert pg.locator("#test-run-banner").is_visible()
        assert pg.locator('#test-run-verdicts tr[data-outcome="incorrect"]').count() == 1
        assert pg.locator("#test-run-preview .preview-row").is_visible()
        assert pg.js_errors == []
    # nobody else gets the preview, in the browser either
    client.force_login(get_user_model().objects.get(username="bob"))
    cookie = {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}
    with chromium_page(live_server, monkeypatch, width, 900, cookies=[cookie]) as pg:
        pg.goto(f"{live_server.url}/leaderboard/?hardware=cpu")
        assert pg.locator("#test-run-preview").count() == 0
