"""Shared browser fixtures: headless Debian Chromium (never a downloaded browser) driven by
Playwright's sync API against pytest-django's live server; screenshots go under
artifacts/screenshots/. The same approach as tests/leaderboard/test_browser.py."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """Submissions commit for real in the live server's thread; their wake-up messages are
    recorded instead of sent to a broker."""
    sent = []
    monkeypatch.setattr("evaluator.pipeline.enqueue_many", lambda ids, queue: sent.append((list(ids), queue)))
    return sent


@pytest.fixture
def chromium(monkeypatch):
    """A browser per test: Playwright's sync API keeps an event loop running in this thread
    while it is started, so it lives no longer than the test (other tests' ORM calls would meet
    Django's async-safety check)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    # the test's own ORM calls while the loop runs are synchronous and safe
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(live_server, chromium):
    """A fresh browser context (no cookies) on the live server; ``page.base`` is its URL,
    ``page.js_errors`` the uncaught script errors, ``page.shot(name)`` saves a screenshot."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(20000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.base = live_server.url
    pg.js_errors = errors
    pg.shot = lambda name, **kw: pg.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True, **kw)
    yield pg
    context.close()
