"""Pages, exports and API: they render with data, and private or withdrawn submissions never
appear on public pages, exports or the API."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.cache import cache

from catalog.models import ExpertReference, Workload
from evaluator.models import Evaluation
from jaxbench import HARNESS_VERSION
from jaxbench import metrics as m
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import WorkloadResult
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db

SECRETS = ("SecretMethod", "SecretModel", "WithdrawnMethod")


def _lb(client, url):
    """The leaderboard renders its board once per data stamp; start from an empty cache so that
    the response carries the template context."""
    cache.clear()
    return client.get(url)


def _no_secrets(text: str):
    for s in SECRETS:
        assert s not in text, s


def test_leaderboard_renders_ranked_reference_and_published(client, populated):
    r = _lb(client, "/leaderboard/")
    assert r.status_code == 200
    html = r.content.decode()
    assert 'id="leaderboard"' in html
    assert "iterative+context" in html and "hand-written" in html
    assert 'data-reference="xla"' in html and 'data-reference="expert"' in html
    assert "reported, not evaluated here" in html and "Autocomp" in html
    assert 'id="self-reported"' in html and "autocomp" in html  # shown apart
    assert "verified here" in html
    assert 'data-figure="fig-geomean"' in html and "vendor/plotly.min.js" in html
    _no_secrets(html)
    rows = r.context["data"]["rows"]
    assert {row["method"] for row in rows} == {"iterative+context", "hand-written"}
    assert all(row["provenance"] == "verified" for row in rows)
    # the self-reported trace is never ranked
    assert all(row["method"] != "autocomp" for row in rows)


def test_default_hardware_and_published_rows_never_ranked(client, populated):
    r = _lb(client, "/leaderboard/")
    assert r.context["q"].hardware.slug == "cpu"
    ranked = {row["method"] for row in r.context["data"]["rows"]}
    assert "best-of-N" not in ranked and "Tokamax (hand-tuned expert kernels)" not in ranked


def test_sorting_tabs_budget_and_filters(client, populated):
    r = _lb(client, "/leaderboard/?hardware=cpu&sort=-geomean")
    g = [row["geomean"] for row in r.context["data"]["rows"]]
    assert g == sorted(g, reverse=True)
    r = _lb(client, "/leaderboard/?hardware=cpu&sort=solved")
    s = [row["solved"] for row in r.context["data"]["rows"]]
    assert s == sorted(s)
    r = _lb(client, "/leaderboard/?hardware=cpu&set=expert")
    assert r.context["meta"]["set_size"] == 8
    assert 'class="active" data-set="expert"' in r.content.decode()
    full = _lb(client, "/leaderboard/?hardware=cpu").context["data"]["rows"]
    one = _lb(client, "/leaderboard/?hardware=cpu&n=1").context["data"]["rows"]
    by = {row["submission"]: row for row in full}
    for row in one:
        assert row["solved"] <= by[row["submission"]]["solved"]
        assert row["geomean"] <= by[row["submission"]]["geomean"] + 1e-12
    r = _lb(client, "/leaderboard/?hardware=cpu&method=hand-written")
    assert [row["method"] for row in r.context["data"]["rows"]] == ["hand-written"]
    r = _lb(client, "/leaderboard/?hardware=cpu&model=gemini 3 flash")
    assert [row["method"] for row in r.context["data"]["rows"]] == ["iterative+context"]
    # the permalink restores the view
    r = _lb(client, "/leaderboard/?hardware=cpu&set=production&n=5&sort=fast&method=hand-written")
    link = r.context["permalink"]
    for part in ("hardware=cpu", "set=production", "n=5", "sort=fast", "method=hand-written"):
        assert part in link
    assert _lb(client, "/leaderboard/" + link).context["q"] == r.context["q"]


def test_expert_percentage_and_ties(client, populated):
    rows = _lb(client, "/leaderboard/?hardware=cpu&set=expert").context["data"]["rows"]
    b = next(row for row in rows if row["method"] == "hand-written")
    # 1.5x on each expert workload vs the experts' 2.0x: 75% of expert
    assert b["expert_pct"] == pytest.approx(0.75)
    refs = _lb(client, "/leaderboard/?hardware=cpu&set=expert").context["data"]["references"]
    assert next(r for r in refs if r["kind"] == "expert")["geomean"] == pytest.approx(2.0)


def test_exports_have_versions_and_hardware_and_no_private_rows(client, populated):
    r = _lb(client, "/leaderboard/?hardware=cpu&format=csv")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    text = r.content.decode()
    _no_secrets(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    ranked = [row for row in rows if row["section"] == "ranked"]
    assert len(ranked) == 2
    assert all(row["hardware"] == "cpu" for row in rows)
    assert {row["jax_version"] for row in ranked} == {"0.10.2", "0.10.1"}
    assert all(row["harness_version"] == HARNESS_VERSION for row in ranked)
    r = _lb(client, "/leaderboard/?hardware=cpu&format=json")
    body = json.loads(r.content)
    _no_secrets(r.content.decode())
    assert body["meta"]["hardware"] == "cpu" and "0.10.2" in body["meta"]["jax_versions"]
    assert body["published_results"][0]["status"] == "reported-not-evaluated"
    # submission and workload exports
    r = client.get(f"/submissions/{populated['a'].pk}/?format=csv")
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert rows and rows[0]["hardware"] == "cpu" and rows[0]["jax_versions"] == "0.10.2"
    w = populated["a"].candidates.first().workload
    r = client.get(f"/workloads/{w.slug}/results.csv")
    text = r.content.decode()
    _no_secrets(text)
    assert "cpu" in text and "1.0.0" in text
    r = client.get(f"/workloads/{w.slug}/results.json")
    assert json.loads(r.content)["rows"]


def test_api_leaderboard_and_submission_aggregates(client, populated):
    r = client.get("/api/v1/leaderboard/?hardware=cpu&set=all&n=3&p=1.2")
    assert r.status_code == 200
    body = r.json()
    _no_secrets(json.dumps(body))
    assert body["meta"]["budget"] == 3 and body["meta"]["p"] == 1.2
    assert len(body["rows"]) == 2 and body["published_results"]
    # p != 1 is computed from the per-workload aggregates
    sub_a = populated["a"]
    aggs = {r.workload_id: r.agg for r in WorkloadResult.objects.filter(submission=sub_a, source="evaluated")}
    ids = list(Workload.objects.values_list("pk", flat=True))
    row = next(x for x in body["rows"] if x["submission"] == sub_a.pk)
    assert row["fast"] == pytest.approx(m.fast_p(m.select(aggs, ids), 3, 1.2))
    r = client.get(f"/api/v1/leaderboard/submissions/{sub_a.pk}/?n=2")
    assert r.status_code == 200
    data = r.json()
    assert {d["source"] for d in data} == {"evaluated"}
    assert len(data[0]["workloads"]) == 20 and data[0]["sets"]["all"]["size"] == 50
    assert client.get(f"/api/v1/leaderboard/submissions/{populated['private'].pk}/").status_code == 404
    client.login(username="bob", password="pw-bob-123")
    assert client.get(f"/api/v1/leaderboard/submissions/{populated['private'].pk}/").status_code == 200
    # still never on the public leaderboard, even for its team
    _no_secrets(client.get("/api/v1/leaderboard/?hardware=cpu").content.decode())


def test_api_schema_lists_leaderboard(client, populated):
    r = client.get("/api/schema/?format=json")
    assert r.status_code == 200
    paths = json.loads(r.content)["paths"]
    assert "/api/v1/leaderboard/" in paths and "/api/v1/leaderboard/submissions/{id}/" in paths


def test_submission_page_permissions(client, populated, users):
    priv = populated["private"].pk
    assert client.get(f"/submissions/{priv}/").status_code == 404
    assert client.get(f"/submissions/{priv}/progress.json").status_code == 404
    assert client.get(f"/submissions/{populated['withdrawn'].pk}/").status_code == 404
    client.login(username="alice", password="pw-alice-123")
    assert client.get(f"/submissions/{priv}/").status_code == 404  # another team's
    _no_secrets(client.get("/leaderboard/").content.decode())
    client.logout()
    client.login(username="bob", password="pw-bob-123")
    r = client.get(f"/submissions/{priv}/")
    assert r.status_code == 200 and "SecretMethod" in r.content.decode()
    assert f'action="/submissions/{priv}/publish/"' in r.content.decode()
    assert r.context["sources"]  # team members see code
    _no_secrets(client.get("/leaderboard/").content.decode())  # but never publicly
    client.logout()
    client.login(username="staff", password="pw-staff-123")
    assert client.get(f"/submissions/{priv}/").status_code == 200


def test_submission_page_renders(client, populated):
    a = populated["a"]
    r = client.get(f"/submissions/{a.pk}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert 'id="progress-bar"' in html and 'data-progress-url="/submissions/' in html
    assert 'id="workload-table"' in html and 'data-figure="fig-fast"' in html
    assert "publish/" not in html  # anonymous: no buttons
    assert r.context["progress"]["finished"] and r.context["progress"]["done"] == 120
    assert r.context["sources"] and 'class="highlight"' in html  # published: code shown
    p = client.get(f"/submissions/{a.pk}/progress.json").json()
    assert p["finished"] and p["total"] == 120
    # trace view
    wid = r.context["rows"][0]["wid"]
    r = client.get(f"/submissions/{a.pk}/?workload={wid}")
    assert r.status_code == 200
    assert len(r.context["samples"]) == 6 and 'id="samples-table"' in r.content.decode()
    best = r.context["best_index"]
    if best is not None:
        assert r.context["lineage"][-1] == best and r.context["lineage"][0] == 0
    r = client.get(f"/submissions/{a.pk}/?workload={wid}&format=json")
    body = json.loads(r.content)
    assert body["meta"]["hardware"] == "cpu"
    assert {"speedup", "speedup_lo", "speedup_hi"} <= set(body["rows"][0])
    csv_head = client.get(f"/submissions/{a.pk}/?workload={wid}&format=csv").content.decode().splitlines()[0]
    assert "speedup,speedup_lo,speedup_hi" in csv_head
    assert client.get(f"/submissions/{a.pk}/?workload=99z").status_code == 404


def test_in_flight_progress_and_waiting(client, populated, hardware, users):
    """An unfinished tpu submission: live progress from evaluator.progress, waiting notice."""
    w = populated["a"].candidates.first().workload
    sub = make_submission(
        populated["alice_team"], hardware["tpu-v6e"], {w: [("correct_faster", 2.0)] * 3}, evaluate=False
    )
    for c in sub.candidates.all():
        Evaluation.objects.create(
            candidate=c, hardware=hardware["tpu-v6e"], stage="main", state="queued", code_sha256=c.code_sha256
        )
    r = client.get(f"/submissions/{sub.pk}/")
    assert r.status_code == 200
    assert r.context["progress"]["waiting_for"] == "tpu-v6e"
    assert "waiting for a tpu-v6e worker" in r.content.decode()
    p = client.get(f"/submissions/{sub.pk}/progress.json").json()
    assert not p["finished"] and p["total"] == 3


def test_workload_page_results(client, populated):
    w = populated["a"].candidates.order_by("workload__number").first().workload
    r = client.get(f"/workloads/{w.slug}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert 'id="results"' in html and "tokamax.op" in html
    assert 'data-figure="fig-roofline-cpu"' in html
    _no_secrets(html)
    entry = r.context["lb_results"][0]
    assert entry["hw"].slug == "cpu" and entry["rows"]
    assert all(row["submission"] not in (populated["private"].pk, populated["withdrawn"].pk) for row in entry["rows"])


def test_compare_page(client, populated):
    a, b = populated["a"].pk, populated["b"].pk
    r = client.get(f"/compare/?s={a}&s={b}")
    assert r.status_code == 200
    html = r.content.decode()
    assert 'id="compare-table"' in html and 'data-figure="fig-scatter"' in html
    assert client.get(f"/compare/?s={a}&s={populated['private'].pk}").status_code == 404
    assert client.get(f"/compare/?s={a}").status_code == 400
    assert client.get("/compare/").status_code == 200
    r = client.get(f"/compare/?s={a}&s={b}&format=csv")
    assert "hardware" in r.content.decode().splitlines()[0]


def test_cache_never_serves_a_withdrawn_submission(client, populated):
    assert "hand-written" in client.get("/leaderboard/?hardware=cpu").content.decode()
    populated["b"].withdraw()
    html = client.get("/leaderboard/?hardware=cpu").content.decode()
    assert 'data-submission="%d"' % populated["b"].pk not in html


def test_ties_intervals_and_rows_timed_before_intervals(client, workloads, hardware, users):
    """A tie is solved but never fast, shows its badge and label; a best sample shows its 95%
    interval, or the 'timed before intervals' tag; exports and the expert reference follow."""
    cpu = hardware["cpu"]
    w0, w1, w2 = workloads[0], workloads[1], workloads[2]  # expert-set workloads
    sub = make_submission(
        make_team("Ties", users["alice"]),
        cpu,
        {
            w0: [("correct_tie", 1.04, (0.97, 1.10)), ("correct_faster", 1.3, (1.2, 1.4))],
            w1: [("correct_faster", 1.6)],  # timed before intervals
            w2: [("correct_tie", 1.02, (0.95, 1.09))],
        },
        method="tie-method",
    )
    ExpertReference.objects.create(
        workload=w0,
        hardware=cpu,
        implementation="tokamax.a",
        median_s=5e-4,
        speedup=2.0,
        speedup_lo=1.8,
        speedup_hi=2.2,
        outcome="correct_faster",
    )
    ExpertReference.objects.create(
        workload=w1, hardware=cpu, implementation="tokamax.b", median_s=5e-4, speedup=1.5, outcome="correct_faster"
    )  # swept before intervals
    ExpertReference.objects.create(
        workload=w2,
        hardware=cpu,
        implementation="tokamax.c",
        median_s=9e-4,
        speedup=1.05,
        speedup_lo=0.98,
        speedup_hi=1.12,
        outcome="correct_tie",
    )
    rebuild_submission(sub)

    r = client.get(f"/submissions/{sub.pk}/")
    html = r.content.decode()
    rows = {row["wid"]: row for row in r.context["rows"]}
    assert rows[w0.wid]["outcome"] == "correct_faster" and rows[w0.wid]["n_tie"] == 1
    assert rows[w2.wid]["outcome"] == "correct_tie" and rows[w1.wid]["best_before_intervals"]
    assert "[1.20, 1.40]" in html and "[0.95, 1.09]" in html and "timed before intervals" in html
    assert 'class="badge correct_tie" title="correct, within noise"' in html and "1 tie" in html

    body = json.loads(client.get(f"/submissions/{sub.pk}/?format=json").content)
    by_wid = {row["wid"]: row for row in body["rows"]}
    assert (by_wid[w0.wid]["best_low"], by_wid[w0.wid]["best_high"], by_wid[w0.wid]["n_tie"]) == (1.2, 1.4, 1)
    assert by_wid[w1.wid]["best_before_intervals"] is True and by_wid[w0.wid]["best_before_intervals"] is False
    head = client.get(f"/submissions/{sub.pk}/?format=csv").content.decode().splitlines()[0]
    assert "n_tie" in head and "best_before_intervals" in head

    html = client.get(f"/workloads/{w0.slug}/").content.decode()
    assert "2.00x [1.80, 2.20]" in html and "[1.20, 1.40]" in html
    html = client.get(f"/workloads/{w1.slug}/").content.decode()
    assert html.count("timed before intervals") == 2  # the expert and the best sample
    res = json.loads(client.get(f"/workloads/{w0.slug}/results.json").content)["rows"]
    expert = next(row for row in res if row["kind"] == "expert")
    assert (expert["best_low"], expert["best_high"], expert["best_before_intervals"]) == (1.8, 2.2, False)

    # fast@all over the expert set (8): w0 (low 1.2) and the legacy w1 (point 1.6) are fast, the tie is not
    data = _lb(client, "/leaderboard/?hardware=cpu&set=expert").context["data"]
    row = next(x for x in data["rows"] if x["method"] == "tie-method")
    assert row["solved"] == 3 and row["fast"] == pytest.approx(2 / 8)
    assert row["geomean"] == pytest.approx((1.3 * 1.6 * 1.02) ** (1 / 8))  # points, floored at 1
    # fast_1.25: w0's low 1.2 is not above 1.25; the legacy point 1.6 is
    row = next(
        x
        for x in _lb(client, "/leaderboard/?hardware=cpu&set=expert&p=1.25").context["data"]["rows"]
        if x["method"] == "tie-method"
    )
    assert row["fast"] == pytest.approx(1 / 8)
    # the experts' reference: the tie (1.05 [0.98, 1.12]) is solved but not fast
    ref = next(x for x in data["references"] if x["kind"] == "expert")
    assert ref["solved"] == 3 and ref["fast"] == pytest.approx(2 / 8)
    # the API: per-workload aggregates carry ties and the before-intervals mark; experts their interval
    agg = client.get(f"/api/v1/leaderboard/submissions/{sub.pk}/").json()[0]
    by_wid = {x["workload"]: x for x in agg["workloads"]}
    assert by_wid[w0.wid]["n_tie"] == 1 and by_wid[w0.wid]["n_faster"] == 1
    assert (by_wid[w0.wid]["best_low"], by_wid[w0.wid]["best_high"]) == (1.2, 1.4)
    assert by_wid[w1.wid]["best_before_intervals"] and not by_wid[w2.wid]["best_before_intervals"]
    assert agg["counts"]["correct_tie"] == 2
    experts = client.get(f"/api/v1/experts/?hardware=cpu&workload={w0.wid}").json()
    experts = experts["results"] if isinstance(experts, dict) else experts
    e0 = next(e for e in experts if e["workload"] == w0.wid)
    assert (e0["speedup"], e0["speedup_lo"], e0["speedup_hi"]) == (2.0, 1.8, 2.2)
