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


def test_a_long_list_of_failures_is_capped(failing):
    from leaderboard.views.submission_rows import failed_samples

    sub, w1, w2, _ = failing
    rows, more = failed_samples(sub, limit=1)
    assert [(r["wid"], r["index"]) for r in rows] == [(w1.wid, 0)] and more
    rows, more = failed_samples(sub)
    assert [(r["wid"], r["index"]) for r in rows] == [(w1.wid, 0), (w2.wid, 0)] and not more


def test_failures_come_in_batches_of_workloads_whatever_the_counts_say(workloads, hardware, users):
    """The page's per-workload counts only size the batches of workloads asked for: right,
    wrong or missing, the list is the same, in workload and sample order, and nothing is lost."""
    import random

    from leaderboard.views.submission_rows import failed_samples, summaries_of, workload_rows

    team = make_team("Batch Lab", users["alice"])
    rng = random.Random(5)
    plan = {
        w: [("correct_faster", 1.5, (1.2, 1.8)) if rng.random() < 0.4 else ("incorrect", None) for _ in range(6)]
        for w in workloads[:7]
    }
    plan[workloads[3]] = [("correct_tie", 1.0, (0.9, 1.1))] * 4  # a workload without failures
    sub = make_submission(team, hardware["cpu"], plan, precheck_stop=(workloads[5].wid,))
    rebuild_submission(sub)
    everything, more = failed_samples(sub, limit=None)
    assert not more and len(everything) == sum(1 for s in plan.values() for o in s if o[0] == "incorrect")
    exact = workload_rows(sub, summaries_of(sub)[0])
    assert sum(r["n_samples"] - r["n_correct"] for r in exact) == len(everything)
    assert [r["wid"] for r in exact] == [w.wid for w in workloads[:7]]
    hints = {
        "the page's": exact,
        "none": None,
        "all zero": [dict(r, n_samples=0, n_correct=0) for r in exact],
        "too many": [dict(r, n_samples=500, n_correct=0) for r in exact],
    }
    for name, rows in hints.items():
        for limit in range(len(everything) + 2):
            got, more = failed_samples(sub, limit=limit, rows=rows)
            assert got == everything[:limit], (name, limit)
            assert more == (len(everything) > limit), (name, limit)
    # rows that leave workloads out (a page's never do): the last batch still takes them
    got, more = failed_samples(sub, limit=len(everything), rows=exact[1:3] + exact[5:])
    key = lambda f: (f["wid"], f["index"])
    assert sorted(got, key=key) == sorted(everything, key=key) and not more


def test_failures_of_earlier_versions_are_not_listed_with_the_current_ones(failing):
    from leaderboard.views.submission_rows import failed_samples

    sub, w1, w2, _ = failing
    Evaluation.objects.filter(candidate__submission=sub, candidate__workload=w2).update(harness_version="0.9.0")
    rows, more = failed_samples(sub)
    assert [(r["wid"], r["index"]) for r in rows] == [(w1.wid, 0)] and not more


def test_the_csv_export_reads_each_workloads_first_failure_only(client, workloads, hardware, users, monkeypatch):
    """Issue 34, item 8: the CSV names only each workload's first failed sample, read in two
    small queries, never the list of every failure (6,045 of the load benchmark's 7,200-sample
    submission: 60 ms of its ~85) nor the state, which only the JSON holds; the same message
    either way."""
    import random

    from leaderboard.views import submission as view
    from leaderboard.views.submission_rows import failed_samples, failure_message, first_failures

    team = make_team("First Lab", users["alice"])
    rng = random.Random(11)
    # a first sample correct or not, then four that fail: each workload's first failure varies
    first = [("correct_faster", 1.5, (1.2, 1.8)), ("incorrect", None), ("timeout", None)]
    plan = {w: [rng.choice(first)] + [(rng.choice(["compile_error", "incorrect"]), None)] * 4 for w in workloads[:6]}
    plan[workloads[2]] = [("correct_tie", 1.0, (0.9, 1.1))] * 3  # a workload without failures
    sub = make_submission(team, hardware["cpu"], plan, precheck_stop=(workloads[4].wid,))
    rebuild_submission(sub)
    everything, _ = failed_samples(sub, limit=None)
    expected = {}
    for f in everything:
        expected.setdefault(f["wid"], f)
    got = first_failures(sub)
    assert got == expected and workloads[2].wid not in got and len(got) == 5
    assert {w: failure_message(f) for w, f in got.items()} == {w: failure_message(f) for w, f in expected.items()}

    def refused(*args, **kwargs):
        raise AssertionError("the CSV export reads every failure")

    monkeypatch.setattr(view, "failed_samples", refused)
    monkeypatch.setattr(view, "progress_for", refused)  # the state: the JSON only
    rows = list(csv.DictReader(io.StringIO(client.get(f"/submissions/{sub.pk}/?format=csv").content.decode())))
    assert {r["wid"]: r["message"] for r in rows if r["message"]} == {
        w: failure_message(f) for w, f in expected.items()
    }


def test_the_json_export_lists_a_bounded_number_of_failures_then_points_at_the_api(client, failing, monkeypatch):
    """A 7,200-sample trace has thousands of failures: the export lists the first ones in
    workload and sample order and says where the rest are (issue 34 item 8: no endpoint a visitor
    can make slow); each workload's message still names its first failure."""
    from leaderboard.views import submission as page

    sub, w1, w2, _ = failing
    body = json.loads(client.get(f"/submissions/{sub.pk}/?format=json").content)
    assert [(f["wid"], f["index"]) for f in body["failures"]] == [(w1.wid, 0), (w2.wid, 0)]
    assert body["failures_more"] is False and body["failures_rest"] is None
    monkeypatch.setattr(page, "EXPORT_FAILURES", 1)
    body = json.loads(client.get(f"/submissions/{sub.pk}/?format=json").content)
    assert [(f["wid"], f["index"]) for f in body["failures"]] == [(w1.wid, 0)]
    assert body["failures_more"] is True
    assert body["failures_rest"] == f"/api/v1/submissions/{sub.pk}/evaluations/"
    rest = client.get(body["failures_rest"]).json()
    assert any(e["outcome"] == "incorrect" for e in rest["results"])  # w2's failure is there
    by = {r["wid"]: r for r in body["rows"]}
    assert by[w2.wid]["message"].startswith("sample 0: incorrect")  # not cut by the bound
    # the state is the page's (its progress), the same as every list's, first failure included
    from leaderboard.submission_state_query import state_of

    assert body["state"] == state_of(sub).as_dict() and "(first: " in body["state"]["reason"]
