"""Shared browser fixtures: the one Chromium page helper of tests/leaderboard/chromium.py (Debian's
Chromium through Playwright, never a downloaded browser) against pytest-django's live server;
screenshots go under artifacts/screenshots/."""

import pytest

from tests.leaderboard.chromium import SCREENSHOTS, chromium_page


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """Submissions commit for real in the live server's thread; their wake-up messages are
    recorded instead of sent to a broker."""
    sent = []
    monkeypatch.setattr("evaluator.pipeline.enqueue_many", lambda ids, queue: sent.append((list(ids), queue)))
    return sent


@pytest.fixture
def page(live_server, monkeypatch):
    """A fresh browser (no cookies) at 1280 x 1000 on the live server; ``page.base`` is its URL,
    ``page.js_errors`` the uncaught script errors, ``page.shot(name)`` saves a screenshot. The
    browser lives no longer than the test: Playwright's sync API keeps an event loop running in
    this thread while it is started (other tests' ORM calls would meet Django's async-safety
    check)."""
    with chromium_page(live_server, monkeypatch, 1280, 1000) as pg:
        pg.shot = lambda name, **kw: pg.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True, **kw)
        yield pg
