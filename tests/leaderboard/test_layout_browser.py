"""Issue 34, item 6: every page type read in Chromium at 1280 x 800 and at 390 x 844 (a phone).

One seeded database (a cpu board of 20 ranked rows over 50 workloads, a trace, a result held for
review) and one browser for all of them. On every page the page itself never scrolls sideways;
at 1280 px the ranking fits its box with every figure in view beside its row's name; at 390 px
the ranking is a single column of cards, each figure labelled with its column's header; a chart
of 2 rows is shorter than one of 20, and no chart label is clipped; beside the best sample's
verdict its time reads "0.667 ms ± 1%". Screenshots under artifacts/screenshots/layout-*."""

from __future__ import annotations

import random
import re

import pytest
from django.test import Client

from evaluator.models import Evaluation
from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.chromium import SCREENSHOTS, chromium_page
from tests.leaderboard.conftest import make_submission, make_team, random_interval_sequence
from tests.leaderboard.test_board_1280 import LABEL_PROBLEMS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"wide": (1280, 800), "phone": (390, 844)}
CHARTS_DRAWN = "() => Array.from(document.querySelectorAll('[data-figure]')).every(e => e.querySelector('.main-svg'))"
OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"
# what sticks out of the page on the right (for the failure message)
WIDE_THINGS = """() => Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + (typeof e.className === 'string' ? e.className : ''))"""
CHART_HEIGHT = "(id) => Math.round(document.getElementById(id).getBoundingClientRect().height)"


@pytest.fixture
def board(populated, workloads, users):
    """``populated`` (2 ranked rows) and 18 more timed side by side, 2 of them by "pair-model"
    (a board of exactly 2 rows); a result of alice's held for review."""
    rng = random.Random(34)
    team = make_team("Charlie Collective of Rather Long Team Names", users["alice"])
    for i in range(18):
        s = make_submission(
            team,
            populated["cpu"],
            {w: random_interval_sequence(rng, 2, 0.55) for w in workloads},
            method=f"agent search variant {i} with a long method name",
            model_name="pair-model" if i < 2 else f"model-{i % 3}",
        )
        rebuild_submission(s)
    held = make_submission(
        populated["alice_team"], populated["cpu"], {workloads[0]: [("correct_faster", 12.0, (11.0, 13.0))]}
    )
    ev = Evaluation.objects.get(candidate__submission=held)
    Evaluation.objects.filter(pk=ev.pk).update(review=Evaluation.HELD, record=dict(ev.record, held_for_review=True))
    rebuild_submission(held)
    return dict(populated, held=ev)


def _cookie(live_server, user) -> dict:
    client = Client()
    client.force_login(user)
    return {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}


def _pages(b, workloads) -> list[tuple[str, str, str | None]]:
    a = b["a"].pk
    w = workloads[0]
    return [
        ("home", "/", None),
        ("board", "/leaderboard/?hardware=cpu", None),
        ("board-production", "/leaderboard/?hardware=cpu&set=production", None),
        ("board-kernelbench", "/leaderboard/?hardware=cpu&set=kernelbench", None),
        ("board-expert", "/leaderboard/?hardware=cpu&set=expert", None),
        ("board-2rows", "/leaderboard/?hardware=cpu&model=pair-model", None),
        ("workloads", "/workloads/?hardware=cpu", None),
        ("workload", f"/workloads/{w.slug}/", None),
        ("submission", f"/submissions/{a}/", None),
        ("trace", f"/submissions/{a}/?workload={w.wid}", None),
        ("compare", f"/compare/?s={a}&s={b['b'].pk}", None),
        ("docs", "/docs/", None),
        ("trace-format", "/docs/trace-format/", None),
        ("api-docs", "/api/docs/", None),
        ("login", "/accounts/login/", None),
        ("signup", "/accounts/signup/", None),
        ("my-submissions", "/submissions/", "alice"),
        ("account", "/account/", "alice"),
        ("submit", "/submit/", "alice"),
        ("team", f"/teams/{b['alice_team'].slug}/", "alice"),
        ("review-list", "/review/", "staff"),
        ("review", f"/review/{b['held'].pk}/", "staff"),
        ("health", "/health/", "staff"),
    ]


def _check_wide_ranking(page):
    """At 1280 px: the ranking fits its box (no sideways scroll there either), every header and
    every figure of the first rows is on screen, on the line of its row's name."""
    fit = page.evaluate(
        "(() => { const t = document.getElementById('leaderboard'), w = t.closest('.board-wrap');"
        " return [t.scrollWidth, w.clientWidth, w.scrollWidth]; })()"
    )
    assert fit[0] <= fit[1] and fit[2] <= fit[1], f"ranking {fit[0]} px in a box of {fit[1]} px"
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('#leaderboard tbody tr[data-submission]')).slice(0, 3).map(tr =>"
        " Array.from(tr.cells).filter(td => td.offsetParent).map(td => { const r = td.getBoundingClientRect();"
        " return [td.dataset.col, r.left, r.right, r.top, tr.cells[0].getBoundingClientRect().top]; }))"
    )
    assert cells and len(cells[0]) >= 9
    for row in cells:
        for col, left, right, top, name_top in row:
            assert 0 <= left and right <= 1280, (col, left, right)
            assert abs(top - name_top) < 1, col  # beside its row's name
    heads = page.evaluate(
        "Array.from(document.querySelectorAll('#leaderboard thead th')).filter(th => th.offsetParent)"
        ".map(th => th.getBoundingClientRect().right)"
    )
    assert heads and max(heads) <= 1280


def _check_phone_ranking(page):
    """At 390 px: each ranked row is a card as wide as the page, its name on top and each
    figure labelled with its column's header."""
    cards = page.evaluate(
        "Array.from(document.querySelectorAll('#leaderboard tbody tr[data-submission]')).slice(0, 3).map(tr => {"
        " const r = tr.getBoundingClientRect(), g = tr.querySelector('[data-col=geomean]');"
        " return {left: r.left, right: r.right, block: getComputedStyle(tr).display,"
        " label: g.dataset.label, before: getComputedStyle(g, '::before').content,"
        " name: tr.querySelector('[data-col=rank]').getBoundingClientRect().top, figure: g.getBoundingClientRect().top}; })"
    )
    assert cards
    for c in cards:
        assert c["block"] == "block" and c["left"] >= 0 and c["right"] <= 390, c
        assert c["label"] == "Floored geomean" and "Floored geomean" in c["before"], c
        assert c["name"] < c["figure"], c  # the name first, its figures under it


def test_every_page_fits_at_1280_and_390(board, workloads, users, live_server, monkeypatch):
    cookies = {name: _cookie(live_server, users[name]) for name in ("alice", "staff")}
    heights: dict[str, dict[str, int]] = {}
    with chromium_page(live_server, monkeypatch, *SIZES["wide"]) as page:
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            for name, url, who in _pages(board, workloads):
                page.context.clear_cookies()
                if who:
                    page.context.add_cookies([cookies[who]])
                response = page.goto(page.base + url)
                assert response.ok, (name, response.status)
                page.wait_for_function(CHARTS_DRAWN)
                overflow = page.evaluate(OVERFLOW)
                assert overflow <= 0, (
                    f"{name} at {width} px scrolls sideways by {overflow} px: {page.evaluate(WIDE_THINGS)}"
                )
                if page.locator(".js-plotly-plot").count():
                    problems = page.evaluate(LABEL_PROBLEMS)
                    assert not problems, (name, width, problems[:5])
                if name == "board":
                    (_check_wide_ranking if size == "wide" else _check_phone_ranking)(page)
                if name.startswith("board") and name in ("board", "board-2rows"):
                    rows = page.locator("#leaderboard tbody tr[data-submission]").count()
                    assert rows == (20 if name == "board" else 2)
                    heights.setdefault(size, {})[name] = page.evaluate(CHART_HEIGHT, "chart-fig-geomean")
                if name == "workload":
                    time = page.locator(".lb-workload-table tbody tr").first.locator(".time-spread").first.inner_text()
                    assert re.fullmatch(r"\d+\.\d{3} ms\s*± \d+(\.\d)?%", time.strip()), time
                if name in ("board", "submission", "workload", "trace", "my-submissions") or size == "phone":
                    page.screenshot(path=str(SCREENSHOTS / f"layout-{name}-{width}.png"), full_page=True)
            assert not page.js_errors, (size, page.js_errors)
    # a chart is sized to its rows: 2 rows are shorter than 20, at either width
    for size in SIZES:
        assert heights[size]["board-2rows"] < heights[size]["board"], heights
        assert heights[size]["board"] >= 20 * 28
