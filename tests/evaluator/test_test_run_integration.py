"""A test run through the real pipeline (every variant): the intake's rows, the broker, a real
Dramatiq worker, the isolated harness, the verdict, the aggregates and the preview; then promoted
to a submission with the very verdicts measured, nothing evaluated again."""

import pytest

from evaluator.models import Evaluation
from jaxbench.record import CORRECT_OUTCOMES
from submissions import intake
from submissions.intake.test_runs import LABEL
from submissions.models import Submission
from tests import factories
from tests.conftest import wait_for
from tests.evaluator.test_pipeline_integration import BROKEN, CORRECT

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_test_run_is_evaluated_by_a_real_worker_then_promoted(start_worker, purge_queues, client):
    user, team = factories.member()
    factories.hardware()
    factories.workload("12p")
    run = intake.create_test_run(team, user, "cpu", [("12p.py", CORRECT + "\n# test run\n")])
    sub = intake.create_kernel_submission(team, user, "cpu", {"method": "M"}, [("12p.py", BROKEN)])
    worker = start_worker(threads=1)

    def final():
        rows = list(Evaluation.objects.filter(candidate__submission_id__in=[run.pk, sub.pk]))
        return len(rows) == 2 and all(r.state in Evaluation.FINAL_STATES for r in rows) and rows

    try:
        wait_for(final, timeout=600, interval=1, message="both evaluations final")
    except AssertionError:
        raise AssertionError(worker.log()) from None
    (row,) = Evaluation.objects.filter(candidate__submission_id=run.pk)
    (other,) = Evaluation.objects.filter(candidate__submission_id=sub.pk)
    assert row.lane == "background" and other.lane == "user"
    assert row.outcome in CORRECT_OUTCOMES, (row.outcome, row.message, worker.log()[-3000:])
    assert row.record["timing"]["median_s"] > 0 and row.speedup_lo <= row.speedup <= row.speedup_hi
    assert other.outcome == "compile_error"
    # its owner sees the verdict and where it would rank (the board has no public row: first)
    client.force_login(user)
    page = client.get(f"/test-runs/{run.pk}/").content.decode()
    assert LABEL in page and row.outcome in page and 'id="test-run-preview"' in page and 'data-rank="1"' in page
    # promoted: the same row and verdict, not measured again (its attempts as they were: a busy
    # machine may have made the first measurement an infrastructure retry, never a verdict)
    promoted = intake.promote_test_run(run, user, {"method": "Hand-written"}, publish=True)
    assert Submission.objects.public().filter(pk=promoted.pk).exists()
    (after,) = Evaluation.objects.filter(candidate__submission_id=promoted.pk)
    assert (after.pk, after.outcome, after.speedup, after.attempts) == (row.pk, row.outcome, row.speedup, row.attempts)
    assert after.finished_at == row.finished_at and after.record == row.record
    page = client.get(f"/submissions/{promoted.pk}/").content.decode()
    assert "Hand-written" in page and LABEL not in page
