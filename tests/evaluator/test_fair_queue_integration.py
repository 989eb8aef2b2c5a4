"""The fair queue on a real worker over the real broker (every variant): demo work queued in the
background lane and already running, a user's upload after it; the worker (one thread, as
`make run` starts it) evaluates the user's row before the demo rows it has not started, even the
one it had already fetched (without the lanes' priorities that one runs first: checked)."""

import pytest
from django.db import transaction

from evaluator.models import Evaluation
from evaluator.pipeline import schedule_submission
from evaluator.queues import BACKGROUND_LANE
from tests import factories
from tests.conftest import wait_for
from tests.evaluator.test_pipeline_integration import CORRECT

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_users_upload_overtakes_queued_demo_work(start_worker, purge_queues):
    user, team = factories.member()
    with transaction.atomic():
        demo = factories.submission([("12p", CORRECT + f"\n# demo {i}\n") for i in range(4)], team=team, user=user)
        schedule_submission(demo, lane=BACKGROUND_LANE)
    worker = start_worker(threads=1)  # the fixture's queues; their background twins are consumed too
    running = lambda: Evaluation.objects.filter(candidate__submission=demo, state=Evaluation.RUNNING).exists()
    try:
        wait_for(running, timeout=300, interval=0.2, message="a demo row running")
    except AssertionError:
        raise AssertionError(worker.log()) from None
    with transaction.atomic():
        mine = factories.submission([("12p", CORRECT + "\n# mine\n")], team=team, user=user)
        schedule_submission(mine)

    def finished():
        rows = list(Evaluation.objects.filter(candidate__submission__in=[demo, mine]))
        return len(rows) == 5 and all(r.state in Evaluation.FINAL_STATES for r in rows) and rows

    try:
        rows = wait_for(finished, timeout=600, interval=1, message="every evaluation final")
    except AssertionError:
        raise AssertionError(worker.log()) from None
    user_row = next(r for r in rows if r.candidate.submission_id == mine.pk)
    demo_rows = [r for r in rows if r.candidate.submission_id == demo.pk]
    assert {r.lane for r in demo_rows} == {BACKGROUND_LANE} and user_row.lane == "user"
    before = [r for r in demo_rows if r.finished_at < user_row.finished_at]
    # only the demo row that was running when the user's message came
    assert len(before) <= 1, [(r.pk, r.started_at, r.finished_at) for r in rows]
    assert all(r.attempts == 1 and not r.reused_from_id for r in rows)
