"""One Chromium page for the browser tests: Debian's Chromium through Playwright (never a
downloaded browser), at a given viewport, with the page's JavaScript errors collected."""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium_page(live_server, monkeypatch, width: int, height: int, cookies=()) -> Iterator:
    """A page at ``width`` x ``height`` whose ``base`` is the live server's URL and whose
    ``js_errors`` list the page errors seen; skips the test where Chromium is missing."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright  # deferred: only needed (and installed) where Chromium is

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the test thread writes rows while Playwright runs
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": width, "height": height})
        if cookies:
            context.add_cookies(list(cookies))
        pg = context.new_page()
        pg.set_default_timeout(30000)
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.base = live_server.url
        pg.js_errors = errors
        try:
            yield pg
        finally:
            context.close()
            browser.close()
