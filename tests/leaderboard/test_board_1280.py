"""The leaderboard read at 1280x800 in headless Chromium (issue 23, items 3 and 4): on a board
with 2 rows and on one with 30 rows over 50 workloads, the ranking number, its interval, solved
and fast@N are inside the viewport without scrolling; every header has a tooltip and a link to
its definition on /docs/; the column picker hides and shows a column and remembers it; ticking
rows opens the comparison, whose columns are not clipped; no chart label overlaps another or
is clipped; a chart with nothing to show says so. Screenshots under artifacts/screenshots/."""

from __future__ import annotations

import random

import pytest

from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.chromium import SCREENSHOTS, chromium_page
from tests.leaderboard.conftest import make_submission, make_team, random_interval_sequence

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

W, H = 1280, 800
PLOT_READY = (
    "() => { const p = document.querySelectorAll('.js-plotly-plot');"
    " return p.length > 0 && Array.from(p).every(e => e.querySelector('.main-svg')); }"
)

# Every visible text of every Plotly chart: its box must lie inside the chart's own box (not
# clipped) and must not overlap another text's box (1 px of tolerance for touching glyphs).
LABEL_PROBLEMS = """() => {
  const problems = [];
  const area = (a) => a.width * a.height;
  document.querySelectorAll('.js-plotly-plot').forEach((plot) => {
    const box = plot.getBoundingClientRect();
    const texts = Array.from(plot.querySelectorAll('svg text'))
      .filter((t) => t.textContent.trim() && getComputedStyle(t).display !== 'none'
                    && getComputedStyle(t).visibility !== 'hidden' && !t.closest('.hoverlayer'))
      .map((t) => ({t: t.textContent.trim(), r: t.getBoundingClientRect()}))
      .filter((x) => area(x.r) > 0);
    for (const x of texts) {
      if (x.r.left < box.left - 1 || x.r.right > box.right + 1 || x.r.top < box.top - 1 || x.r.bottom > box.bottom + 1) {
        problems.push(plot.id + ': clipped "' + x.t + '"');
      }
    }
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].r, b = texts[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) { problems.push(plot.id + ': "' + texts[i].t + '" overlaps "' + texts[j].t + '"'); }
      }
    }
  });
  return problems;
}"""


@pytest.fixture
def browser_page(live_server, monkeypatch):
    with chromium_page(live_server, monkeypatch, W, H) as pg:
        pg.shot = lambda name: pg.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        yield pg


@pytest.fixture
def many_rows(populated, workloads, users):
    """28 more verified submissions over all 50 workloads, timed side by side (intervals)."""
    rng = random.Random(23)
    team = make_team("Charlie Collective of Rather Long Team Names", users["alice"])
    for i in range(28):
        s = make_submission(
            team,
            populated["cpu"],
            {w: random_interval_sequence(rng, 2, 0.55) for w in workloads},
            method=f"agent search variant {i} with a long method name",
            model_name=f"model-{i % 3}",
        )
        rebuild_submission(s)
    return populated


def _inside_viewport(page, selector):
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not displayed"
    assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= W and box["y"] + box["height"] <= H, (selector, box)
    return box


def _check_ranking_cells_visible(page):
    row = "#leaderboard tbody tr[data-submission]"
    for sel in (
        f"{row} [data-col=rank] .rank",
        f"{row} [data-col=geomean] strong",
        f"{row} [data-col=geomean] .interval",
        f"{row} [data-col=solved]",
        f"{row} [data-col=fast]",
    ):
        _inside_viewport(page, sel)
    assert page.locator(f"{row} [data-col=geomean] .interval").first.inner_text().startswith("[")
    assert page.evaluate("document.documentElement.scrollLeft") == 0


def test_two_row_board_at_1280(browser_page, populated):
    page = browser_page
    page.goto(page.base + "/leaderboard/?hardware=cpu")
    page.wait_for_function(PLOT_READY)
    assert page.locator("#leaderboard tbody tr[data-submission]").count() == 2
    _check_ranking_cells_visible(page)
    page.shot("board-2rows-1280")

    # every header: a tooltip (its definition) and a link to that definition on /docs/
    heads = page.evaluate(
        "Array.from(document.querySelectorAll('#leaderboard thead th')).map(th => ({"
        "col: th.dataset.col, title: th.getAttribute('title') || '',"
        " href: (th.querySelector('a.def') || {}).getAttribute ? th.querySelector('a.def').getAttribute('href') : ''}))"
    )
    assert len(heads) >= 10
    for h in heads:
        assert len(h["title"]) > 20, h
        assert h["href"] == f"/docs/#col-{h['col']}", h
    assert not page.evaluate(LABEL_PROBLEMS)

    # the column picker hides and shows a column, and the choice survives a reload
    ug = "#leaderboard thead th[data-col=ugeomean]"
    assert page.is_visible(ug) and not page.is_visible("#leaderboard thead th[data-col=jax]")  # default
    page.click("#col-picker summary")
    page.uncheck("[data-col-toggle=ugeomean]")
    assert not page.is_visible(ug) and not page.is_visible("#leaderboard tbody [data-col=ugeomean]")
    page.check("[data-col-toggle=jax]")
    assert page.is_visible("#leaderboard thead th[data-col=jax]")
    page.reload()
    page.wait_for_function(PLOT_READY)
    assert not page.is_visible(ug) and page.is_visible("#leaderboard thead th[data-col=jax]")
    page.click("#col-picker summary")
    page.check("[data-col-toggle=ugeomean]")
    assert page.is_visible(ug)
    page.click("#col-reset")
    assert not page.is_visible("#leaderboard thead th[data-col=jax]")

    # compare by ticking rows
    assert page.is_disabled("#compare-ticked")
    boxes = page.locator("#leaderboard input.pick")
    boxes.nth(0).check()
    assert page.is_disabled("#compare-ticked")
    boxes.nth(1).check()
    assert page.is_enabled("#compare-ticked")
    ids = page.evaluate("Array.from(document.querySelectorAll('input.pick:checked')).map(b => b.value)")
    page.click("#compare-ticked")
    page.wait_for_url("**/compare/**")
    assert all(f"s={i}" in page.url for i in ids)
    page.wait_for_function(PLOT_READY)
    assert page.evaluate("document.querySelectorAll('#compare-summary thead th').length") == 3

    # each definition exists on /docs/
    page.goto(page.base + "/docs/")
    for h in heads:
        assert page.locator(f"#col-{h['col']}").count() == 1, h
    assert not page.js_errors, page.js_errors


def test_many_rows_and_50_workloads_at_1280(browser_page, many_rows):
    page = browser_page
    page.goto(page.base + "/leaderboard/?hardware=cpu")
    page.wait_for_function(PLOT_READY)
    assert page.locator("#leaderboard tbody tr[data-submission]").count() == 30
    _check_ranking_cells_visible(page)
    # the heatmap has a column per workload and room for every row
    assert page.evaluate("document.getElementById('chart-fig-heatmap').data[0].x.length") == 50
    heat = page.locator("#chart-fig-heatmap").bounding_box()
    assert heat["width"] > 1000 and heat["height"] >= 30 * 28
    # the geomean bars carry the intervals as error bars
    assert page.evaluate("document.getElementById('chart-fig-geomean').data[0].error_x.array.length") == 30
    problems = page.evaluate(LABEL_PROBLEMS)
    assert not problems, problems[:10]
    page.shot("board-many-1280")
    # the sticky header stays in view when the table scrolls
    page.evaluate("document.querySelector('.board-wrap').scrollTop = 400")
    head = page.locator("#leaderboard thead th[data-col=geomean]").bounding_box()
    wrap = page.locator(".board-wrap").bounding_box()
    assert abs(head["y"] - wrap["y"]) < 3

    # compare three: no column clipped
    ids = page.evaluate(
        "Array.from(document.querySelectorAll('#leaderboard tbody tr[data-submission]')).slice(0, 3)"
        ".map(r => r.dataset.submission)"
    )
    page.goto(page.base + "/compare/?" + "&".join(f"s={i}" for i in ids))
    page.wait_for_function(PLOT_READY)
    for k in range(1, 5):
        _inside_viewport(page, f"#compare-summary thead th:nth-child({k})")
    assert page.evaluate("document.getElementById('chart-fig-scatter').data.length") == 3
    assert page.evaluate("document.getElementById('chart-fig-scatter').layout.scattermode") == "group"
    problems = page.evaluate(LABEL_PROBLEMS)
    assert not problems, problems[:10]
    page.shot("compare-3-1280")
    assert not page.js_errors, page.js_errors


def test_fast_p_chart_and_empty_chart_messages(browser_page, populated, hardware):
    page = browser_page
    # no sample is faster than 3x: the fast_3@N chart says so instead of flat lines alone
    page.goto(page.base + "/leaderboard/?hardware=cpu&p=3")
    page.wait_for_function(PLOT_READY)
    assert page.input_value("#id_p") == "3.0"
    texts = page.evaluate(
        "Array.from(document.querySelectorAll('#chart-fig-fast .annotation-text')).map(t => t.textContent)"
    )
    assert any("No workload has a kernel faster than 3x XLA" in t for t in texts), texts
    ytitle = page.evaluate("document.querySelector('#chart-fig-fast .g-ytitle text').textContent")
    assert ytitle == "fast_3@N"
    ticks = page.evaluate(
        "Array.from(document.querySelectorAll('#chart-fig-fast .xtick text')).map(t => t.textContent)"
    )
    assert ticks and all(t.isdigit() for t in ticks), ticks  # whole samples only
    assert not page.evaluate(LABEL_PROBLEMS)
    page.shot("board-fast-p3-1280")
    # the other pages' charts read as well: a submission's, a workload's roofline
    page.goto(page.base + f"/submissions/{populated['a'].pk}/")
    page.wait_for_function(PLOT_READY)
    problems = page.evaluate(LABEL_PROBLEMS)
    assert not problems, problems[:10]
    w = populated["a"].candidates.order_by("workload__number").first().workload
    page.goto(page.base + f"/workloads/{w.slug}/")
    page.wait_for_function(PLOT_READY)
    problems = page.evaluate(LABEL_PROBLEMS)
    assert not problems, problems[:10]
    page.goto(page.base + "/workloads/?hardware=cpu")
    _inside_viewport(page, "#workloads tbody tr[data-workload='1p'] .best-expert")
    page.shot("workloads-best-1280")
    # two submissions without a correct kernel: the scatter has nothing to show and says so
    team = populated["bob_team"]
    w = populated["a"].candidates.first().workload
    subs = [
        make_submission(team, hardware["cpu"], {w: [("compile_error", None)]}, kind="kernels", method=f"broken {i}")
        for i in range(2)
    ]
    for s in subs:
        rebuild_submission(s)
    page.goto(page.base + f"/compare/?s={subs[0].pk}&s={subs[1].pk}")
    page.wait_for_function(PLOT_READY)
    msg = page.evaluate(
        "Array.from(document.querySelectorAll('#chart-fig-scatter .annotation-text')).map(t => t.textContent)"
    )
    assert msg == ["No correct kernel among these submissions yet."], msg
    page.shot("compare-empty-1280")
    assert not page.js_errors, page.js_errors


def test_the_versions_menu_and_the_all_versions_board_at_1280(browser_page, populated, workloads):
    """The Versions select beside the filters switches to every version: the banner says the rows
    are not comparable, a row that took an earlier harness's result is flagged, and the ranking
    cells are still on screen without scrolling."""
    from evaluator.models import Evaluation

    sub = populated["b"]
    for ev in Evaluation.objects.filter(candidate__submission=sub, candidate__workload__in=workloads[:3]):
        Evaluation.objects.filter(pk=ev.pk).update(
            harness_version="1.0.0", record=dict(ev.record, harness_version="1.0.0")
        )
    rebuild_submission(sub)
    page = browser_page
    page.goto(page.base + "/leaderboard/?hardware=cpu")
    page.wait_for_function(PLOT_READY)
    _inside_viewport(page, "#id_versions")
    assert page.locator("#versions-banner").count() == 0
    page.select_option("#id_versions", "all")
    page.click(".lb-toolbar button[type=submit]")
    page.wait_for_url("**versions=all**")
    page.wait_for_function(PLOT_READY)
    assert page.is_visible("#versions-banner") and "Not comparable." in page.inner_text("#versions-banner")
    flagged = page.locator(f"#leaderboard tr[data-submission='{sub.pk}'] .badge", has_text="from earlier versions")
    assert flagged.count() == 1 and "harness 1.0.0" in flagged.get_attribute("title")
    _check_ranking_cells_visible(page)
    assert not page.evaluate(LABEL_PROBLEMS)
    page.shot("board-all-versions-1280")
    assert not page.js_errors, page.js_errors
