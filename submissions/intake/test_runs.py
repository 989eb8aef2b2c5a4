"""Test runs: a private evaluation of a few kernel files (docs/DESIGN.md, "Test runs").

A test run comes through the same checks and the same one-transaction store as a kernel
submission (``service``), and the same ``submission_stored`` signal schedules it: the evaluator
puts it in the background lane, behind every real submission's work. It belongs to the user who
made it (``Submission.test_runs.owned_by``), is never published, and goes when its owner deletes
it or when it expires (the reconciler and ``manage.py expire_test_runs`` call
``expire_test_runs``), unless promoted to an ordinary submission (``promote_test_run``): the same
row, the same candidates and their verdicts, nothing uploaded or measured again."""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from jaxbench.limits import TEST_RUN_DAYS, TEST_RUN_MAX_KERNELS, TEST_RUN_MAX_LIVE
from submissions.intake.service import (
    check_team,
    clean_meta,
    kernel_candidates,
    refuse_off_platform,
    resolve_hardware,
    store,
)
from submissions.intake.uploads import IntakeError, Upload
from submissions.models import Submission
from submissions.signals import test_run_promoted

LIFETIME = datetime.timedelta(days=TEST_RUN_DAYS)
# how every page, the API and the client name one, wherever it appears
LABEL = "test run — private, not on the board"


def create_test_run(team, user, hardware, files: Iterable[Upload | tuple]) -> Submission:
    """A test run of ``files`` (at most ``TEST_RUN_MAX_KERNELS`` kernels, checked like a kernel
    submission's) on ``hardware``, owned by ``user`` in ``team``. Raises :class:`IntakeError`;
    stores nothing then."""
    check_team(team, user)
    live = Submission.test_runs.owned_by(user).count()
    if live >= TEST_RUN_MAX_LIVE:
        raise IntakeError(
            f"you have {live} test runs, the most one person may keep; delete one (or wait until one "
            f"expires, {TEST_RUN_DAYS} days after it was made) first",
            field="test_run",
        )
    hw = resolve_hardware(hardware)
    candidates = kernel_candidates(files, most=TEST_RUN_MAX_KERNELS)
    refuse_off_platform(hw, (c.workload_id for c in candidates))
    submission = Submission(
        team=team,
        created_by=user,
        hardware=hw,
        kind=Submission.KERNELS,
        method="",  # named when promoted
        budget=1,
        sampling=Submission.INDEPENDENT,
        test_run=True,
        expires_at=timezone.now() + LIFETIME,
    )
    return store(submission, candidates)


def promote_test_run(test_run: Submission, user, meta: dict, publish: bool = False) -> Submission:
    """Make ``test_run`` an ordinary submission of its team ("Submit for the board"): ``meta``
    names it as a kernel submission's (method required; model or model_name, framework,
    description, link, selection, selector). The row keeps its candidates and every verdict
    measured or still to come (the same bytes, the same harness and rules); its queued
    evaluations move to the user lane (the evaluator answers ``test_run_promoted``). Private to
    the team until published, unless ``publish``. Raises :class:`IntakeError`."""
    meta, errors = clean_meta({k: v for k, v in meta.items() if k != "upload_key"})
    if errors:
        raise IntakeError(errors)
    with transaction.atomic():
        run = Submission.test_runs.select_for_update().filter(pk=test_run.pk, created_by=user).first()
        if run is None:
            raise IntakeError("this test run no longer exists: it was deleted or has expired", field="test_run")
        check_team(run.team, user)
        run.method = meta["method"]
        run.model_name = meta["model_name"]
        run.framework = meta["framework"]
        run.description = meta["description"]
        run.link = meta["link"]
        run.selection = meta["selection"]
        run.selector = meta["selector"]
        run.test_run = False
        run.expires_at = None
        if publish:
            run.published_at = timezone.now()
        run.save()
        test_run_promoted.send(sender=Submission, submission=run)
    return run


def delete_test_run(test_run: Submission) -> None:
    """Delete a test run with its candidates, evaluations and aggregates. A worker that is
    running one of its evaluations drops the verdict when it finds the row gone."""
    Submission.test_runs.filter(pk=test_run.pk).delete()


def expire_test_runs(now=None) -> int:
    """Delete every test run whose time is up; returns how many."""
    _, deleted = Submission.test_runs.expired(now).delete()
    return deleted.get(Submission._meta.label, 0)
