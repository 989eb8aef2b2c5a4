"""Why every failed sample failed, where the user looks: the submission page (first lines, the
full text behind an expander, the candidate's line, a link to the sample) and its exports."""

from __future__ import annotations

import csv
import io
import json

import pytest

from evaluator.models import Evaluation
from jaxbench.verdict.rules import classify_child_error
from leaderboard.aggregates.refresh import rebuild_submission
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db

# the child's reply for a `workload` defined with the wrong number of arguments
WRONG_SIGNATURE_REPLY = {
    "type": "error",
    "stage": "trace",
    "exc_type": "TypeError",
    "message": "TypeError: workload() takes 1 positional argument but 2 were given\n",
    "where": ["candidate.py:9 in run: return workload(x, weight)"],
}


@pytest.fixture
def failing(workloads, hardware, users):
    team = make_team("Alpha Lab", users["alice"])
    w1, w2 = workloads[0], workloads[1]
    sub = make_submission(
        team,
        hardware["cpu"],
        {w1: [("compile_error", None), ("correct_faster", 1.5, (1.2, 1.8))], w2: [("incorrect", None)]},
        kind="kernels",
    )
    outcome, category, message = classify_child_error(WRONG_SIGNATURE_REPLY, "compile")
    assert outcome == "compile_error"
    Evaluation.objects.filter(candidate__submission=sub, candidate__workload=w1, candidate__index=0).update(
        message=message, record={"error_category": category, "jax_version": "0.10.2", "harness_version": "1.0.0"}
    )
    long = "max |cand - exact| = 3.2 beyond the allowance\n" + "\n".join(f"output {i}: off" for i in range(12))
    Evaluation.objects.filter(candidate__submission=sub, candidate__workload=w2).update(message=long)
    rebuild_submission(sub)
    return sub, w1, w2, long


def test_submission_page_shows_why_each_sample_failed(client, failing):
    sub, w1, w2, long = failing
    html = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert 'id="failure-table"' in html
    row = html.split(f'id="failure-{w1.wid}-0"')[1].split("</tr>")[0]
    assert "compile_error" in row and "trace_error" in row
    assert "TypeError: workload() takes 1 positional argument but 2 were given" in row
    assert "at candidate.py:9 in run: return workload(x, weight)" in row  # the candidate's line
    assert f'href="?workload={w1.wid}&amp;sample=0#sample-0"' in row  # the sample's own view
    row = html.split(f'id="failure-{w2.wid}-0"')[1].split("</tr>")[0]
    head, full = row.split("<details>")
    assert "beyond the allowance" in head and "output 1: off" in head and "output 2: off" not in head
    assert "output 11: off" in full  # the whole message on expand
    # correct samples are not listed; the sample view has the anchor the link names
    assert f'id="failure-{w1.wid}-1"' not in html
    assert 'id="sample-0"' in client.get(f"/submissions/{sub.pk}/?workload={w1.wid}&sample=0").content.decode()


def test_submission_exports_carry_the_message(client, failing):
    sub, w1, w2, _ = failing
    rows = list(csv.DictReader(io.StringIO(client.get(f"/submissions/{sub.pk}/?format=csv").content.decode())))
    by = {r["wid"]: r for r in rows}
    assert "TypeError: workload() takes 1 positional argument" in by[w1.wid]["message"]
    assert by[w2.wid]["message"].startswith("sample 0: incorrect: max |cand - exact| = 3.2")
    body = json.loads(client.get(f"/submissions/{sub.pk}/?format=json").content)
    first = body["failures"][0]
    assert (first["wid"], first["index"], first["outcome"], first["category"]) == (
        w1.wid,
        0,
        "compile_error",
        "trace_error",
    )
    assert first["where"] == ["candidate.py:9 in run: return workload(x, weight)"]
    assert body["failures"][1]["message"].endswith("output 11: off")  # full text


def test_a_long_list_of_failures_is_capped_and_counted(failing):
    from leaderboard.views.submission_rows import failed_samples

    sub, w1, w2, _ = failing
    rows, total = failed_samples(sub, limit=1)
    assert [(r["wid"], r["index"]) for r in rows] == [(w1.wid, 0)] and total == 2
    rows, total = failed_samples(sub)
    assert [(r["wid"], r["index"]) for r in rows] == [(w1.wid, 0), (w2.wid, 0)] and total == 2
