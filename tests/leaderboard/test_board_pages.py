"""Server side of the readable board (issue 23, items 3, 4, 6): column definitions on /docs/,
the fast_p@N chart for a chosen p, /workloads/'s best result per workload, and the workload
page's side-by-side baseline."""

from __future__ import annotations

import json
import random
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Workload
from evaluator.models import Evaluation
from jaxbench import metrics
from leaderboard import charts
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.columns import COLUMNS
from leaderboard.data import Query, chart_inputs, leaderboard_data
from leaderboard.models import SubmissionSummary, WorkloadResult
from tests.leaderboard.conftest import make_submission, random_interval_sequence

pytestmark = pytest.mark.django_db


def _figure(html: str, fig_id: str) -> dict:
    m = re.search(rf'<script id="{fig_id}" type="application/json">(.*?)</script>', html, re.S)
    assert m, fig_id
    return json.loads(m.group(1))


def test_every_column_header_links_to_its_definition_on_docs(client, populated):
    html = client.get("/leaderboard/?hardware=cpu").content.decode()
    docs = client.get("/docs/").content.decode()
    for c in COLUMNS:
        assert f'<th data-col="{c.key}"' in html
        assert f'href="/docs/#col-{c.key}"' in html
        assert f'<dt id="col-{c.key}">' in docs
    # the first four after the sticky column are the ranking number, solved and fast@N
    assert [c.key for c in COLUMNS[:4]] == ["rank", "geomean", "solved", "fast"]
    assert all(not c.optional for c in COLUMNS[:4])


def test_fast_p_curves_follow_the_chosen_p(populated):
    q1 = Query.from_params({"hardware": "cpu"})
    q2 = Query.from_params({"hardware": "cpu", "p": "1.4"})
    c1 = chart_inputs(q1, leaderboard_data(q1))["curves"]
    c2 = chart_inputs(q2, leaderboard_data(q2))["curves"]
    # submission b: every sample 1.5x (timed before intervals, classified by its point): fast
    # at p = 1.4 on its 10 of 50 workloads
    b = next(c for c in c2 if c["label"].startswith(f"#{populated['b'].pk} "))
    assert b["fast"][0] == pytest.approx(10 / 50)
    a1 = next(c for c in c1 if c["label"].startswith(f"#{populated['a'].pk} "))
    a2 = next(c for c in c2 if c["label"].startswith(f"#{populated['a'].pk} "))
    assert all(y <= x for x, y in zip(a1["fast"], a2["fast"])) and a2["fast"] != a1["fast"]
    rows = leaderboard_data(q2)["rows"]
    assert a2["fast"][-1] == pytest.approx(next(r["fast"] for r in rows if r["submission"] == populated["a"].pk))


def test_leaderboard_page_fast_chart_for_p(client, populated):
    html = client.get("/leaderboard/?hardware=cpu&p=3").content.decode()
    fig = _figure(html, "fig-fast")
    assert fig["layout"]["yaxis"]["title"]["text"] == "fast_3@N"
    assert any("faster than 3x" in a["text"] for a in fig["layout"]["annotations"])
    assert '<option value="3.0" selected>' in html
    heat = _figure(html, "fig-heatmap")
    assert len(heat["data"][0]["x"]) == 50 and heat["layout"]["height"] >= 200 + 30 * 2
    assert charts.empty_message(_figure(html, "fig-geomean")) is None


def test_workloads_page_names_the_best_result_its_lead_and_the_expert(client, populated, workloads):
    html = client.get("/workloads/?hardware=cpu").content.decode()
    # 1p: a's random best against b's 1.5x; expert 2.0x on the 8 expert workloads
    row = re.search(r'<tr data-workload="1p">(.*?)</tr>', html, re.S).group(1)
    assert "best-who" in row and "/submissions/" in row
    assert re.search(r'class="num best-expert">2\.00x<', row)
    # 15p: only b... or a: whichever, the lead is a ratio >= 1 or "only entry"
    for wid in ("1p", "5p", "15p"):
        row = re.search(rf'<tr data-workload="{wid}">(.*?)</tr>', html, re.S).group(1)
        lead = re.search(r'class="num best-lead">(.*?)</td>', row, re.S).group(1)
        assert "only entry" in lead or float(re.search(r"([\d.]+)x", lead).group(1)) >= 1.0
    # a workload nobody solved
    row = re.search(r'<tr data-workload="50k">(.*?)</tr>', html, re.S).group(1)
    assert "no correct kernel yet" in row
    assert "SecretMethod" not in html and "WithdrawnMethod" not in html


def test_workload_page_shows_the_baseline_timed_beside_the_best_sample(client, populated, hardware):
    w = Workload.objects.get(wid="12p")
    sub = make_submission(
        populated["bob_team"], hardware["cpu"], {w: [("correct_slower", 0.02, (0.018, 0.022))]}, method="slowpoke"
    )
    ev = Evaluation.objects.get(candidate__submission=sub)
    rec = dict(ev.record, baseline_median_s=0.29e-3)
    rec["timing"] = dict(rec["timing"], median_s=13.4e-3)
    Evaluation.objects.filter(pk=ev.pk).update(record=rec)
    rebuild_submission(sub)
    html = client.get(f"/workloads/{w.slug}/").content.decode()
    row = re.search(rf'<tr data-submission="{sub.pk}">(.*?)</tr>', html, re.S).group(1)
    assert "0.290 ms" in row and "13.400 ms" in row
    assert "XLA baseline (alone)" in html and "XLA beside it" in html


def _assert_fast_p_of_whole_aggregates(q, data, charts_in):
    """Every row's fast_p@N (and each plotted row's curve, at every N) equals what the metrics give
    over its whole stored aggregates; the rows hold both sampling modes."""
    ids = [w["pk"] for w in data["members"]]
    rows = data["rows"] + data["self_reported"] + data["in_progress"]
    assert {r["mode"] for r in rows} == {metrics.SEQUENTIAL, metrics.INDEPENDENT}
    for r in rows:
        whole = {
            wl: metrics.WorkloadAggregate.from_dict(a)
            for wl, a in WorkloadResult.objects.filter(summary_id=r["summary_id"]).values_list(
                "workload_id", "aggregate"
            )
        }
        aggs = metrics.select(whole, ids)
        assert r["fast"] == metrics.fast_p(aggs, q.n, q.p, r["mode"])
        plotted = next((c for c in charts_in["rows"] if c["row"] is r), None)
        if plotted is not None:
            assert plotted["fast"] == [v for _, v in metrics.fast_p_curve(aggs, q.p, r["mode"])]
            assert plotted["fast"] == [
                metrics.fast_p(aggs, n, q.p, r["mode"]) for n in range(1, len(plotted["fast"]) + 1)
            ]


def test_fast_p_for_another_p_reads_only_what_it_needs_of_the_aggregates(populated, workloads, hardware):
    """Issue 34, item 8: for p != 1 the board cuts out of each stored aggregate only what
    fast_p@N reads (the whole aggregates of the load benchmark's board took ~1.3 s to load and
    parse), with the same values as the whole aggregates give: sequential and independent
    rows, and an aggregate stored before intervals (no lows: its points stand for them)."""
    rng = random.Random(7)
    independent = make_submission(
        populated["b"].team,
        hardware["cpu"],
        {w: random_interval_sequence(rng, 5, 0.7) for w in workloads[:12]},
        sampling="independent",
        method="independent-sampler",
    )
    rebuild_submission(independent)
    old = WorkloadResult.objects.filter(submission=populated["a"], n_correct__gt=0).first()
    stripped = {k: v for k, v in old.aggregate.items() if k not in ("correct_lows", "low_progression")}
    WorkloadResult.objects.filter(pk=old.pk).update(aggregate=stripped)
    # a summary stored before its lows were packed (SubmissionSummary.fast_lows): read through
    # its aggregates; the others from their packed lows
    SubmissionSummary.objects.filter(pk=old.summary_id).update(fast_lows=b"")

    q = Query.from_params({"hardware": "cpu", "p": "1.2"})
    with CaptureQueriesContext(connection) as ctx:
        data = leaderboard_data(q, use_cache=False)
        charts_in = chart_inputs(q, data)
    reads = [c["sql"] for c in ctx.captured_queries if 'FROM "leaderboard_workloadresult"' in c["sql"]]
    # the column itself is never selected: only what the database cuts out of it
    whole = re.compile(r'(SELECT |, )"leaderboard_workloadresult"\."aggregate"( AS "aggregate")?(,| FROM)')
    assert reads and not any(whole.search(s) for s in reads), reads

    _assert_fast_p_of_whole_aggregates(q, data, charts_in)


def test_fast_p_for_another_p_reads_one_row_per_summary(populated, workloads, hardware, django_assert_max_num_queries):
    """Issue 34, item 8: with every summary's lows packed (``fast_lows``), a board at p != 1 reads
    no per-workload aggregate at all (10,000 JSON aggregates on the load benchmark's board, ~0.3 s
    of CPU on SQLite): one query of the packed lows for the rows, one for the plotted rows, and
    the same values as the whole aggregates give (sequential and independent rows)."""
    rng = random.Random(8)
    independent = make_submission(
        populated["b"].team,
        hardware["cpu"],
        {w: random_interval_sequence(rng, 6, 0.7) for w in workloads[:12]},
        sampling="independent",
        method="independent-sampler",
    )
    rebuild_submission(independent)
    q = Query.from_params({"hardware": "cpu", "p": "1.3", "n": "4"})
    base = Query.from_params({"hardware": "cpu", "n": "4"})
    with CaptureQueriesContext(connection) as plain:
        chart_inputs(base, leaderboard_data(base, use_cache=False))
    with CaptureQueriesContext(connection) as ctx:
        data = leaderboard_data(q, use_cache=False)
        charts_in = chart_inputs(q, data)
    assert not [c for c in ctx.captured_queries if 'FROM "leaderboard_workloadresult"' in c["sql"]]
    assert len(ctx.captured_queries) <= len(plain.captured_queries) + 2
    _assert_fast_p_of_whole_aggregates(q, data, charts_in)
