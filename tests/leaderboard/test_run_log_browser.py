"""The run logs on a phone-sized screen (390 px wide, headless Chromium): opened, with a long
unbroken line and many lines of captured output, they wrap and scroll inside themselves and the
page does not scroll sideways. A screenshot is saved as artifacts/screenshots/run-log-390.png."""

from __future__ import annotations

import pytest

from evaluator.models import Evaluation
from tests.leaderboard.chromium import SCREENSHOTS, chromium_page
from tests.leaderboard.test_run_logs import make_logged

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

W, H = 390, 844


@pytest.fixture
def phone(live_server, monkeypatch):
    with chromium_page(live_server, monkeypatch, W, H) as pg:
        yield pg


# The run logs alone: everything else on the page hidden (other parts of it, e.g. the summary
# tables, have widths of their own that are not the logs' concern), then the page's width.
LOGS_ALONE = """() => {
  const first = document.querySelector('details.run-log');
  const keep = e => e.matches('#run-logs, #run-logs-note, details.run-log, style');
  for (const e of Array.from(first.parentElement.children)) { if (!keep(e)) e.style.display = 'none'; }
  for (let a = first.parentElement; a && a !== document.body; a = a.parentElement) {
    for (const s of Array.from(a.parentElement.children)) { if (s !== a && s.tagName !== 'SCRIPT') s.style.display = 'none'; }
  }
  const doc = document.documentElement;
  const boxes = Array.from(document.querySelectorAll('details.run-log'))
    .map(d => ({left: d.getBoundingClientRect().left, right: d.getBoundingClientRect().right,
                sw: d.scrollWidth, cw: d.clientWidth}));
  return {page: doc.scrollWidth, viewport: doc.clientWidth, boxes: boxes};
}"""


def test_open_run_logs_do_not_scroll_the_page_sideways_at_390px(phone, workloads, hardware, users):
    logged = make_logged(workloads, hardware, users)
    ev = logged["bad"]
    rec = dict(ev.record)
    noisy = dict(rec["export_child_output"])
    noisy["stdout"] = "A" * 3000 + "\n" + "".join(f"traced shape ({i}, 4096, 128) bfloat16\n" for i in range(200))
    rec["export_child_output"] = noisy
    Evaluation.objects.filter(pk=ev.pk).update(record=rec)

    phone.goto(phone.base + f"/submissions/{logged['sub'].pk}/")
    n = phone.evaluate("document.querySelectorAll('details.run-log').length")
    assert n == 4
    assert phone.evaluate("Array.from(document.querySelectorAll('details.run-log')).every(d => !d.open)")
    phone.evaluate("document.querySelectorAll('details.run-log').forEach(d => { d.open = true; })")
    got = phone.evaluate(LOGS_ALONE)
    assert got["viewport"] == W and got["page"] <= W, got  # no sideways scroll of the page
    for box in got["boxes"]:  # each log inside the screen, nothing of it sticking out
        assert 0 <= box["left"] and box["right"] <= W and box["sw"] <= box["cw"], box
    pre = phone.evaluate(
        f"""() => {{ const p = document.querySelector('#run-log-{ev.pk} pre[data-stream="export-stdout"]');
        const r = p.getBoundingClientRect();
        return {{left: r.left, right: r.right, sw: p.scrollWidth, cw: p.clientWidth,
                 sh: p.scrollHeight, ch: p.clientHeight, overflow: getComputedStyle(p).overflowY}}; }}"""
    )
    assert 0 <= pre["left"] and pre["right"] <= W  # inside the screen
    assert pre["sw"] <= pre["cw"]  # the 3,000-character line wraps
    assert pre["sh"] > pre["ch"] and pre["overflow"] == "auto"  # 200 lines scroll inside the <pre>
    phone.locator(f'#run-log-{ev.pk} pre[data-stream="export-stdout"]').scroll_into_view_if_needed()
    phone.screenshot(path=str(SCREENSHOTS / "run-log-390.png"), full_page=False)
    assert phone.js_errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_sampling_width_reads_on_one_screen(width, live_server, monkeypatch, workloads, hardware, users):
    """The line that says how far the adaptive sampling narrowed the speedup's interval sits
    inside the screen, wrapped, at desktop and phone widths, with the figures of the record."""
    logged = make_logged(workloads, hardware, users)
    ev = logged["good"]
    rec = dict(ev.record)
    rec["resolution"] = {
        "target": 0.05,
        "halfwidth": 0.0734,
        "rounds": 6,
        "pairs": 300,
        "stopped": "rounds",
        "budget_s": 30.0,
        "min_rounds": 3,
        "round_speedups": [1.02, 0.97, 1.05, 0.99, 1.01, None],
    }
    Evaluation.objects.filter(pk=ev.pk).update(record=rec)
    with chromium_page(live_server, monkeypatch, width, 844) as pg:
        pg.goto(pg.base + f"/submissions/{logged['sub'].pk}/")
        pg.evaluate(f"document.querySelector('#run-log-{ev.pk}').open = true")
        line = pg.locator(f"#run-log-{ev.pk} [data-resolution]")
        line.scroll_into_view_if_needed()
        text = " ".join(line.inner_text().split())
        assert "sampling reached ±7.3% of the speedup in 300 pairs (target ±5%; stopped: rounds)" in text, text
        box = line.evaluate(
            "e => { const r = e.getBoundingClientRect(); const p = e.parentElement.getBoundingClientRect();"
            " return {left: r.left, right: r.right, pl: p.left, pr: p.right, vw: document.documentElement.clientWidth}; }"
        )
        assert box["vw"] == width
        assert 0 <= box["pl"] and box["pr"] <= width, box  # the paragraph fits the screen
        assert 0 <= box["left"] and box["right"] <= width, box
        got = pg.evaluate(LOGS_ALONE)
        assert got["page"] <= width, got  # the open log does not scroll the page sideways
        pg.screenshot(path=str(SCREENSHOTS / f"run-log-resolution-{width}.png"), full_page=False)
        assert pg.js_errors == []
