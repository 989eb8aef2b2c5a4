"""Headless Chromium against the live server: the leaderboard draws its Plotly charts with the
portal's own plotly.js, sorting and tabs work, the progress bar updates without a reload, and a
screenshot of each main page is saved under artifacts/screenshots/."""

from __future__ import annotations

import pytest

from evaluator.models import Evaluation
from leaderboard.aggregates.refresh import refresh_for_evaluation
from tests.leaderboard.chromium import SCREENSHOTS, chromium_page
from tests.leaderboard.conftest import make_submission

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PLOT_READY = (
    "() => { const p = document.querySelectorAll('.js-plotly-plot');"
    " return p.length > 0 && Array.from(p).every(e => e.data && e.data.length > 0); }"
)


@pytest.fixture
def page(populated, live_server, monkeypatch):
    with chromium_page(live_server, monkeypatch, 1400, 1000) as pg:
        yield pg


def _shot(page, name):
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_leaderboard_draws_charts_sorts_and_switches_tabs(page, populated):
    page.goto(page.base + "/leaderboard/?hardware=cpu")
    page.wait_for_function(PLOT_READY)
    n_plots = page.evaluate("document.querySelectorAll('.js-plotly-plot').length")
    assert n_plots == 5
    assert page.evaluate("document.querySelector('.js-plotly-plot').data.length") >= 1
    assert page.evaluate("typeof window.Plotly") == "object"
    src = page.evaluate("Array.from(document.scripts).map(s => s.src).filter(s => s.includes('plotly'))[0]")
    assert src.startswith(page.base) and "/static/vendor/plotly.min.js" in src  # served here, no CDN
    bars = page.evaluate("document.getElementById('chart-fig-geomean').data[0].y.length")
    assert bars == 2
    _shot(page, "leaderboard")

    def ranked():
        return page.evaluate(
            "Array.from(document.querySelectorAll('#leaderboard tbody tr[data-submission]'))"
            ".map(r => +r.dataset.submission)"
        )

    by_geomean = ranked()
    page.click("#leaderboard thead a[data-sort='solved']")
    page.wait_for_url("**sort=-solved**")
    assert "sort=-solved" in page.url
    solved_desc = ranked()
    page.click("#leaderboard thead a[data-sort='solved']")
    page.wait_for_url("**sort=solved**")
    assert ranked() == list(reversed(solved_desc)) or sorted(ranked()) == sorted(by_geomean)
    page.click("nav.tabs a[data-set='expert']")
    page.wait_for_url("**set=expert**")
    assert page.get_attribute("nav.tabs a.active", "data-set") == "expert"
    page.wait_for_function(PLOT_READY)
    assert "SecretMethod" not in page.content()
    assert not page.js_errors, page.js_errors


def test_screenshots_of_main_pages(page, populated):
    a, b = populated["a"].pk, populated["b"].pk
    page.goto(page.base + f"/submissions/{a}/")
    page.wait_for_function(PLOT_READY)
    _shot(page, "submission")
    w = populated["a"].candidates.order_by("workload__number").first().workload
    page.goto(page.base + f"/workloads/{w.slug}/")
    page.wait_for_function(PLOT_READY)
    _shot(page, "workload")
    page.goto(page.base + f"/compare/?s={a}&s={b}")
    page.wait_for_function(PLOT_READY)
    assert page.evaluate("document.querySelectorAll('.js-plotly-plot').length") == 2
    _shot(page, "compare")
    page.goto(page.base + "/")
    _shot(page, "home")
    assert not page.js_errors, page.js_errors
    for name in ("submission", "workload", "compare", "home"):
        assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000


def test_progress_bar_updates_without_reload(page, populated, hardware):
    w = populated["a"].candidates.first().workload
    sub = make_submission(populated["alice_team"], hardware["cpu"], {w: [("correct_faster", 2.0)] * 2}, evaluate=False)
    evs = [
        Evaluation.objects.create(
            candidate=c, hardware=hardware["cpu"], stage="main", state="queued", code_sha256=c.code_sha256
        )
        for c in sub.candidates.order_by("index")
    ]
    page.goto(page.base + f"/submissions/{sub.pk}/")
    assert page.inner_text("#progress-text").startswith("0 / 2")
    page.evaluate("window.__marker = 'same page'")
    verdicts = [("correct_faster", 2.0, [1.8, 2.2]), ("correct_tie", 1.03, [0.96, 1.1])]
    for ev, (outcome, speedup, ci) in zip(evs, verdicts):
        Evaluation.objects.filter(pk=ev.pk).update(
            state="done",
            outcome=outcome,
            speedup=speedup,
            speedup_lo=ci[0],
            speedup_hi=ci[1],
            record={"speedup_ci": ci},
        )
        ev.refresh_from_db()
        refresh_for_evaluation(ev)
    page.wait_for_function("document.getElementById('progress-text').textContent.startsWith('2 / 2')", timeout=20000)
    assert page.evaluate("window.__marker") == "same page"  # updated in place, no reload
    assert page.evaluate("document.getElementById('progress-bar').value") == 2
    text = page.inner_text("#progress-outcomes")
    assert "correct_faster 1" in text and "correct_tie 1" in text
    assert not page.is_hidden("#progress-done")
    # the trace page shows each sample's interval and the tie's badge
    page.goto(page.base + f"/submissions/{sub.pk}/?workload={w.wid}")
    rows = page.inner_text("#samples-table")
    assert "2.00x [1.80, 2.20]" in rows and "1.03x [0.96, 1.10]" in rows
    assert page.locator("#samples-table .badge.correct_tie").count() == 1
    _shot(page, "trace-with-tie")
