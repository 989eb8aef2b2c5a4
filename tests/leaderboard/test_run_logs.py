"""Run logs (issue item 5): each evaluation's phases, timings and the children's captured output on
the submission page (collapsed, escaped) and in the API (``/api/v1/evaluations/<id>/log/``,
linked from every evaluation of the list). The records are real harness records
(tests/jaxbench/records/), stored through the worker's own ``runner.finish``."""

from __future__ import annotations

import json
import pathlib
import re

import pytest
from django.test import Client

from evaluator import runner
from evaluator.models import Evaluation
from jaxbench import HARNESS_VERSION
from jaxbench.record import format_speedup
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.views.submission_run_logs import submission_run_logs
from submissions.models import Candidate
from tests.leaderboard.conftest import make_submission, make_team

RECORDS = pathlib.Path(__file__).resolve().parents[1] / "jaxbench" / "records"
SCRIPT = "<script>alert(1)</script>"


def real_record(name: str) -> dict:
    rec = json.loads((RECORDS / f"{name}.json").read_text())
    rec["harness_version"] = HARNESS_VERSION  # stored as this portal's own
    return rec


def finish(sub, workload, record, index=0) -> Evaluation:
    cand = Candidate.objects.get(submission=sub, workload=workload, index=index)
    ev = Evaluation.objects.create(
        candidate=cand, hardware=sub.hardware, stage=Evaluation.MAIN, state=Evaluation.RUNNING, code_sha256="x"
    )
    runner.finish(ev, record, Evaluation.DONE)
    ev.refresh_from_db()
    return ev


@pytest.fixture
def logged(workloads, hardware, users):
    return make_logged(workloads, hardware, users)


def make_logged(workloads, hardware, users) -> dict:
    """alice's public kernels submission: 1p failed to compile after printing a <script> in ANSI
    colours, 2p correct, 3p reused 2p's verdict, 4p correct but held for review; bob's private
    submission with one evaluation."""
    cpu = hardware["cpu"]
    team = make_team("Alpha Lab", users["alice"])
    w1, w2, w3, w4 = workloads[:4]
    sub = make_submission(
        team,
        cpu,
        {w: [("correct_faster", 1.0)] for w in (w1, w2, w3, w4)},
        kind="kernels",
        evaluate=False,
    )
    bad = finish(sub, w1, real_record("compile_error_prints_12p_small_cpu"))
    good_rec = real_record("correct_12p_small_cpu")
    good = finish(sub, w2, good_rec)
    cand = Candidate.objects.get(submission=sub, workload=w3)
    reused = Evaluation.objects.create(
        candidate=cand, hardware=cpu, stage=Evaluation.MAIN, state=Evaluation.RUNNING, code_sha256="x"
    )
    runner.finish(reused, dict(good_rec, reused=True), Evaluation.DONE, reused_from=good)
    held_rec = dict(good_rec, outcome="correct_faster", speedup=12.0, speedup_ci=[11.0, 13.0], held_for_review=True)
    held_rec["notes"] = ["speedup above 10x: held for review"]
    held = finish(sub, w4, held_rec)
    rebuild_submission(sub)
    other = make_team("Bravo", users["bob"])
    private = make_submission(other, cpu, {w1: [("compile_error", None)]}, kind="kernels", published=False)
    return {
        "sub": sub,
        "bad": bad,
        "good": good,
        "reused": Evaluation.objects.get(pk=reused.pk),
        "held": held,
        "private": private,
        "private_ev": Evaluation.objects.get(candidate__submission=private),
    }


def details(html: str, pk: int) -> str:
    m = re.search(rf'<details class="run-log" id="run-log-{pk}"[^>]*>(.*?)</details>', html, re.S)
    assert m, f"no run log for evaluation {pk}"
    return m.group(1)


def test_the_submission_page_shows_each_evaluations_run_log_collapsed(client, logged):
    html = client.get(f"/submissions/{logged['sub'].pk}/").content.decode()
    assert 'id="run-logs"' in html
    for key in ("bad", "good", "reused", "held"):
        assert re.search(rf'<details class="run-log" id="run-log-{logged[key].pk}" data-evaluation="\d+">', html)
    good = details(html, logged["good"].pk)
    for phase in ("export", "load", "compile", "check", "timing", "verdict"):
        assert f'data-phase="{phase}_s"' in good
    assert "import_s" in good and "stopped here" not in good  # the child's own account of its compile
    ev = logged["good"]
    assert "Speedup " + format_speedup(ev.speedup, ev.speedup_lo, ev.speedup_hi) in good
    assert "cpu_thunk_span" in good and "XLA baseline" in good


def test_a_failed_evaluations_log_shows_where_it_stopped_and_escapes_what_the_candidate_printed(client, logged):
    html = client.get(f"/submissions/{logged['sub'].pk}/").content.decode()
    bad = details(html, logged["bad"].pk)
    stopped = re.search(r'<tr data-phase="(\w+)" class="stopped">', bad)
    assert stopped and stopped.group(1) == "export_s"
    assert "stopped here: compile_error (trace_error)" in bad
    assert 'data-phase="compile_s"' not in bad and "run-log-timing" not in bad
    assert "hello from candidate red &lt;script&gt;alert(1)&lt;/script&gt;" in bad
    assert SCRIPT not in html  # never as markup, anywhere on the page
    assert "\x1b" not in html and "\x07" not in html
    assert "err linebell" in bad


def test_reused_and_held_logs_say_so(client, logged):
    html = client.get(f"/submissions/{logged['sub'].pk}/").content.decode()
    reused = details(html, logged["reused"].pk)
    assert "reused" in reused and f"evaluation {logged['good'].pk}" in reused
    assert f'href="/api/v1/evaluations/{logged["good"].pk}/log/"' in reused
    held = details(html, logged["held"].pk)
    assert "timings withheld" in held and "run-log-timing" not in held and "12.00x" not in held
    assert "loop_s" not in held and "baseline_s" not in held


def test_a_page_lists_a_bounded_number_of_logs(logged):
    rows, more = submission_run_logs(logged["sub"], limit=2)
    assert len(rows) == 2 and more
    assert [r["pk"] for r in rows] == [logged["bad"].pk, logged["good"].pk]  # workload order
    rows, more = submission_run_logs(logged["sub"])
    assert len(rows) == 4 and not more


def test_the_api_gives_an_evaluations_run_log(logged):
    c = Client()
    ev = logged["bad"]
    r = c.get(f"/api/v1/evaluations/{ev.pk}/log/")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["evaluation"] == ev.pk and body["submission"] == logged["sub"].pk and body["stage"] == "main"
    log = body["run_log"]
    assert log["outcome"] == "compile_error" and log["timing"] is None
    assert [p["key"] for p in log["phases"] if p["status"] == "stopped"] == ["export_s"]
    out = {(o["child"], o["stream"]): o for o in log["outputs"]}
    assert out["export", "stdout"]["text"] == "hello from candidate red " + SCRIPT  # JSON carries text; clients escape
    assert not out["export", "stdout"]["trimmed"]
    good = c.get(f"/api/v1/evaluations/{logged['good'].pk}/log/").json()["run_log"]
    assert good["timing"]["candidate"]["n"] == 50 and good["timing"]["baseline"]["median_s"] > 0
    reused = c.get(f"/api/v1/evaluations/{logged['reused'].pk}/log/").json()["run_log"]
    assert reused["reused"] and reused["reused_from"] == logged["good"].pk
    held = c.get(f"/api/v1/evaluations/{logged['held'].pk}/log/").json()["run_log"]
    assert held["speed_withheld"] and held["timing"] is None and held["outcome"] == "held_for_review"


def test_the_evaluation_list_links_each_log_and_stays_light(logged):
    r = Client().get(f"/api/v1/submissions/{logged['sub'].pk}/evaluations/")
    rows = r.json()["results"]
    assert rows and all(row["log"].endswith(f"/api/v1/evaluations/{row['id']}/log/") for row in rows)
    assert all("run_log" not in row for row in rows)


def test_a_private_submissions_log_is_its_teams_only(logged, users):
    path = f"/api/v1/evaluations/{logged['private_ev'].pk}/log/"
    assert Client().get(path).status_code == 404
    alice = Client()
    alice.force_login(users["alice"])
    assert alice.get(path).status_code == 404
    bob = Client()
    bob.force_login(users["bob"])
    assert bob.get(path).status_code == 200
    assert Client().get("/api/v1/evaluations/999999/log/").status_code == 404


def test_the_schema_documents_the_log(client, logged):
    schema = client.get("/api/schema/?format=json").json()
    op = schema["paths"]["/api/v1/evaluations/{id}/log/"]["get"]
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    run_log = schema["components"]["schemas"][ref]["properties"]["run_log"]["$ref"].rsplit("/", 1)[-1]
    props = schema["components"]["schemas"][run_log]["properties"]
    assert {"phases", "timing", "outputs", "reused", "reused_from", "remarks"} <= set(props)
    assert "log" in schema["components"]["schemas"]["Evaluation"]["properties"]
