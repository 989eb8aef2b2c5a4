"""ATIF trajectories and ADK sessions uploaded through the API and the web form: the right
candidates (with the step's time and the agent's cumulative tokens and cost) and their
evaluations through the one intake path; clear 400s and form errors; one transaction (a bad
document, or a failure while storing, leaves nothing); the cost card on the pages."""

from __future__ import annotations

import datetime as dt
import io
import json
import pathlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluator.models import Evaluation
from jaxbench.traces import dumps_lines, example_trace
from submissions import intake
from submissions.models import Candidate, Submission
from tests.submissions.conftest import counts

FIXTURES = pathlib.Path(__file__).parents[1] / "jaxbench" / "traces" / "fixtures"
TRACE_URL = "/api/v1/submissions/trace/"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture
def alice(api, people):
    return api(people.tokens["alice"])


def rows(sub):
    return list(
        Candidate.objects.filter(submission=sub)
        .order_by("id")
        .values_list(
            "workload__wid",
            "index",
            "step_ref",
            "step_at",
            "tokens_in",
            "tokens_out",
            "cost_usd",
            "cum_tokens_in",
            "cum_tokens_out",
            "cum_cost_usd",
        )
    )


T0 = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)


def test_atif_raw_json_body_creates_a_candidate_and_evaluation_per_kernel(alice, catalog):
    r = alice.post(
        f"{TRACE_URL}?upload_key=atif-1", fixture_bytes("atif_two_workloads.json"), content_type="application/json"
    )
    assert r.status_code == 201, r.json()
    d = r.json()
    assert (d["kind"], d["candidates"], d["sampling"], d["method"], d["upload_key"]) == (
        "trace",
        3,
        "sequential",
        "kernel-agent",
        "atif-1",
    )
    sub = Submission.objects.get(pk=d["id"])
    assert sub.model_name == "claude-sonnet-4" and sub.selection == "pass_at_k" and sub.hardware.slug == "cpu"
    assert sub.trace_settings["trajectory"]["format"] == "ATIF-v1.4"
    assert rows(sub) == [
        ("12p", 0, "step 3 (steps[2].tool_calls[0])", T0 + dt.timedelta(seconds=9), 1000, 200, 0.01, 1000, 200, 0.01),
        (
            "12p",
            1,
            "step 5 (steps[4].tool_calls[0])",
            T0 + dt.timedelta(seconds=62),
            3500,
            350,
            0.032,
            4500,
            550,
            0.042,
        ),
        ("8p", 0, "step 6 (steps[5].tool_calls[0])", T0 + dt.timedelta(seconds=100), 800, 100, 0.005, 5300, 650, 0.047),
    ]
    # every kernel is linked to its evaluation, as a jaxbench-trace/1 sample is
    assert set(
        Evaluation.objects.filter(candidate__submission=sub).values_list("candidate__index", "candidate__workload__wid")
    ) == {
        (0, "12p"),
        (1, "12p"),
        (0, "8p"),
    }
    # retried with the same key: the first submission, nothing new
    again = alice.post(
        f"{TRACE_URL}?upload_key=atif-1", fixture_bytes("atif_two_workloads.json"), content_type="application/json"
    )
    assert again.status_code == 200 and again.json()["id"] == sub.pk
    assert counts()[:2] == (1, 3)


def test_adk_multipart_with_upload_parameters(alice, catalog):
    doc = json.loads(fixture_bytes("adk_session.json"))
    del doc["state"]["jaxbench"]
    r = alice.post(
        TRACE_URL,
        {
            "trace": SimpleUploadedFile("session.json", json.dumps(doc).encode()),
            "hardware": "cpu",
            "workload": "12p_RMSNorm",
            "model": "Gemini 2.5 Pro",
        },
    )
    assert r.status_code == 201, r.json()
    sub = Submission.objects.get(pk=r.json()["id"])
    assert (sub.method, sub.model_name, sub.framework) == (
        "pallas_agent",
        "Gemini 2.5 Pro",
        "Google ADK, app pallas_agent",
    )
    assert [
        (w, i, tin, tout, cost, cin, cout, ccost) for w, i, _, _, tin, tout, cost, cin, cout, ccost in rows(sub)
    ] == [
        ("12p", 0, 900, 200, 0.004, 900, 200, 0.004),
        ("12p", 1, 1200, 100, 0.006, 2100, 300, 0.01),
    ]


@pytest.mark.parametrize(
    "body, field, message",
    [
        (b'{"schema_version": "ATIF-v1.4", "steps": [', None, "not valid JSON"),
        (
            fixture_bytes("atif_two_workloads.json").replace(b'"cost_usd": 0.012', b'"cost_usd": "0.012"'),
            "steps[3].metrics.cost_usd",
            "expected a number or null, not string",
        ),
        (fixture_bytes("adk_session.json").replace(b'"author": "user",', b""), "events[0].author", "missing"),
        (
            fixture_bytes("atif_two_workloads.json").replace(b'"hardware": "cpu"', b'"hardware": "tpu-v9"'),
            "extra.jaxbench.hardware",
            "unknown hardware",
        ),
    ],
)
def test_malformed_documents_are_a_400_naming_the_path_and_store_nothing(alice, catalog, body, field, message):
    r = alice.post(TRACE_URL, body, content_type="application/json")
    assert r.status_code == 400, r.content
    errors = r.json()["errors"]
    assert any(e["field"] == field and message in e["message"] for e in errors), errors
    assert "nothing was stored" in r.json()["detail"]
    assert counts() == (0, 0, 0)


def test_trajectory_parameters_are_refused_with_a_jsonl_trace(alice, catalog):
    data = dumps_lines(example_trace()).encode()
    r = alice.post(TRACE_URL, {"trace": SimpleUploadedFile("t.jsonl", data), "workload": "12p"})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "workload"
    assert counts() == (0, 0, 0)
    # without them, jaxbench-trace/1 is read as it always was, the new columns left empty
    r = alice.post(TRACE_URL, {"trace": SimpleUploadedFile("t.jsonl", data)})
    assert r.status_code == 201
    assert set(Candidate.objects.values_list("step_ref", "step_at", "cum_tokens_in", "cum_cost_usd")) == {
        ("", None, None, None)
    }


def test_a_failure_while_storing_leaves_nothing_behind(catalog, people, monkeypatch):
    """One transaction: the submission row is saved, then the candidates' insert fails."""
    import submissions.intake.service as service

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(service, "insert_rows", boom)
    with pytest.raises(RuntimeError):
        intake.create_trace_submission(
            people.team_a, people.alice, io.BytesIO(fixture_bytes("atif_two_workloads.json"))
        )
    assert counts() == (0, 0, 0)


def test_a_bad_kernel_late_in_the_document_rejects_the_whole_upload(catalog, people):
    doc = json.loads(fixture_bytes("atif_two_workloads.json"))
    doc["steps"][5]["tool_calls"][0]["arguments"]["workload"] = "99p"  # after two good kernels
    with pytest.raises(intake.IntakeError) as info:
        intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(json.dumps(doc).encode()))
    assert info.value.errors[0]["field"] == "steps[5].tool_calls[0].arguments.workload"
    assert counts() == (0, 0, 0)


def test_the_form_uploads_a_trajectory_and_shows_errors_next_to_its_fields(client, catalog, people):
    client.force_login(people.alice)
    doc = json.loads(fixture_bytes("adk_session.json"))
    del doc["state"]["jaxbench"]
    data = json.dumps(doc, indent=2).encode()
    r = client.post("/submit/trace/", {"team": "team-a", "trace": SimpleUploadedFile("s.json", data)})
    html = r.content.decode()
    assert r.status_code == 200 and "name the hardware target" in html and counts() == (0, 0, 0)
    r = client.post(
        "/submit/trace/",
        {"team": "team-a", "trace": SimpleUploadedFile("s.json", data), "hardware": "cpu", "workload": "77p"},
    )
    assert r.status_code == 200 and "unknown workload &#x27;77p&#x27;" in r.content.decode() and counts() == (0, 0, 0)
    r = client.post(
        "/submit/trace/",
        {
            "team": "team-a",
            "trace": SimpleUploadedFile("s.json", data),
            "hardware": "cpu",
            "workload": "12p",
            "method": "Loop",
        },
    )
    sub = Submission.objects.get()
    assert r.status_code == 302 and sub.method == "Loop" and sub.candidates.count() == 2
    bad = data.replace(b'"prompt_token_count": 900', b'"prompt_token_count": -900')
    r = client.post(
        "/submit/trace/",
        {"team": "team-a", "trace": SimpleUploadedFile("s.json", bad), "hardware": "cpu", "workload": "12p"},
    )
    html = r.content.decode()
    assert "field &#x27;events[1].usage_metadata.prompt_token_count&#x27;: must be &gt;= 0" in html
    assert counts()[0] == 1


def _measure(sub, outcomes: dict[tuple[str, int], str]):
    """Give the candidates the portal's verdicts (as the worker would: a finished main row)."""
    for (wid, index), outcome in outcomes.items():
        Evaluation.objects.filter(
            candidate__submission=sub, candidate__workload__wid=wid, candidate__index=index
        ).exclude(stage=Evaluation.PRECHECK).update(
            state=Evaluation.DONE, outcome=outcome, speedup=1.5 if outcome == "correct_faster" else 0.9
        )


def test_the_pages_show_cost_and_tokens_to_first_correct_from_measured_verdicts(
    client, settings, alice, catalog, people
):
    settings.STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    r = alice.post(TRACE_URL, fixture_bytes("atif_two_workloads.json"), content_type="application/json")
    sub = Submission.objects.get(pk=r.json()["id"])
    client.force_login(people.alice)
    html = client.get(f"/submissions/{sub.pk}/?workload=12p").content.decode()
    assert 'id="agent-cost"' in html and "self-reported usage" in html and "not solved" in html  # nothing measured yet
    _measure(sub, {("12p", 0): "incorrect", ("12p", 1): "correct_faster", ("8p", 0): "compile_error"})
    html = client.get(f"/submissions/{sub.pk}/?workload=12p").content.decode()
    assert '<td class="num tokens-to-first-correct">5.0k</td>' in html  # 4500 in + 550 out at step 5
    assert '<td class="num cost-to-first-correct">$0.0420</td>' in html
    # fast@2 = 1 of 2 workloads, over $0.047 to the last kernel
    assert (
        '<strong id="fast-per-dollar">10.638</strong>' in html
        and '<strong id="cost-per-solved">$0.0470</strong>' in html
    )
    page = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert 'id="agent-cost"' in page and 'data-workload="8p"' in page


def test_no_cost_card_for_other_submissions(client, settings, alice, catalog, people):
    settings.STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    r = alice.post(TRACE_URL, dumps_lines(example_trace()).encode(), content_type="application/x-ndjson")
    client.force_login(people.alice)
    html = client.get(f"/submissions/{r.json()['id']}/?workload=12p").content.decode()
    assert 'id="agent-cost"' not in html


def test_the_trace_format_page_documents_trajectories_and_its_example_parses(client, catalog):
    from jaxbench import traces as tf
    from submissions.views.submissions import _ATIF_EXAMPLE

    html = client.get("/docs/trace-format/").content.decode()
    assert 'id="trajectories"' in html and "extra.jaxbench.workload" in html and "<code>file_text</code>" in html
    t = tf.parse_trajectory(json.dumps(_ATIF_EXAMPLE).encode(), None, ["cpu"])
    assert [(s["workload_id"], s["index"], s["cum_cost_usd"]) for s in t.samples] == [("12p", 0, 0.0031)]
