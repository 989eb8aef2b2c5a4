"""The whole path for a level-2, ten-configuration workload defined in the tests (tests/level2):
registry (JAXBENCH_EXTRA_WORKLOADS in the test and in the worker) -> trace upload over the REST
API -> a real Dramatiq worker -> the harness's sandboxed children, once per configuration ->
per-configuration baselines -> one verdict per sample -> the level-2 aggregates -> the pages.
Heavy (ten configurations are twenty sandboxed children per sample): beside the integration
tiers, never among the fast tier's tests."""

import json

import pytest
from django.utils import timezone

from catalog.models import Baseline
from evaluator.models import Evaluation
from jaxbench.record import CORRECT_OUTCOMES
from jaxbench.traces import FORMAT
from leaderboard.models import SubmissionSummary
from submissions.models import ApiToken, Submission
from tests import factories
from tests import level2 as level2_kernels
from tests.conftest import LEVEL2_ENV, wait_for

pytestmark = [pytest.mark.heavy, pytest.mark.django_db(transaction=True)]


def test_a_level_two_trace_is_evaluated_per_configuration_by_a_real_worker(client, level2, start_worker):
    factories.hardware()
    factories.workload("12p")
    factories.workload("51d")
    worker = start_worker(extra_env=LEVEL2_ENV)
    user, _ = factories.member()
    token = ApiToken.issue(user, "tests")[1]
    head = {"format": FORMAT, "method": "level2-agent", "model": "m", "hardware": "cpu", "sampling": "sequential"}
    lines = [
        head,
        {"workload": "51d", "index": 0, "code": level2_kernels.kernel_wrong_from_c05()},
        {"workload": "51d", "index": 1, "code": level2_kernels.kernel_ok()},
    ]
    r = client.post(
        "/api/v1/submissions/trace/",
        "\n".join(json.dumps(x) for x in lines) + "\n",
        content_type="application/x-ndjson",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert r.status_code == 201, r.content
    sub = Submission.objects.get(pk=r.json()["id"])

    def rows():
        got = list(
            Evaluation.objects.filter(candidate__submission=sub, stage=Evaluation.MAIN).order_by("candidate__index")
        )
        return got if len(got) == 2 and all(e.state in Evaluation.FINAL_STATES for e in got) else None

    try:
        wrong, ok = wait_for(rows, timeout=900, interval=2, message="both samples final")
    except AssertionError:
        raise AssertionError(worker.log()) from None

    assert ok.outcome in CORRECT_OUTCOMES, (ok.message, worker.log())
    assert [c["outcome"] in CORRECT_OUTCOMES for c in ok.record["configurations"]] == [True] * 10
    assert ok.speedup and ok.record["speedup_ci"][0] <= ok.speedup <= ok.record["speedup_ci"][1]
    assert wrong.outcome == "incorrect" and wrong.message.startswith("configuration c05 (5 of 10 run)")
    assert [c["outcome"] for c in wrong.record["configurations"]][4:] == ["incorrect"] + ["not_run"] * 5
    # the worker measured the baseline of every configuration, once, and stored them together
    base = Baseline.objects.get(workload__wid="51d")
    assert sorted(base.record["configurations"]) == sorted(f"small/c{i:02d}" for i in range(1, 11))

    summary = SubmissionSummary.objects.get(submission=sub, source=SubmissionSummary.EVALUATED)
    assert summary.complete and summary.sets["level2"]["solved"] == 1 and summary.sets["all"]["solved"] == 0
    Submission.objects.filter(pk=sub.pk).update(published_at=timezone.now())
    page = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert page.count('data-configuration="c') == 10
    assert "level2-agent" in client.get("/leaderboard/?hardware=cpu&set=level2").content.decode()
