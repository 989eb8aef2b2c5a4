"""manage.py rescore: new rows under the current workload and harness versions, through the
intake's own scheduling, idempotent by version; the earlier rows stay, the page shows both, and
``--wait`` (or the page's progress, after the staff action) follows the new rows."""

from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from evaluator import pipeline, runner
from evaluator.models import Evaluation
from evaluator.rescore import rescore_submission
from leaderboard.aggregates.refresh import rebuild_submission
from tests import factories

pytestmark = pytest.mark.django_db

A = "def workload(x, scale):\n    return x * scale\n"
B = "def workload(x, scale):\n    return x * scale  # b\n"


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


def _judged(codes, speedup=2.0, published=True):
    """A submission whose every candidate was measured (versions current at the time)."""
    sub = factories.submission(codes, published=published)
    for ev_id in pipeline.schedule_submission(sub):
        factories.judge(ev_id, factories.judged_record("correct_faster", speedup))
    return sub


def _rescore(*args):
    out = StringIO()
    call_command("rescore", *args, stdout=out)
    return out.getvalue()


def test_rescore_creates_current_version_rows_once(sent, monkeypatch, django_capture_on_commit_callbacks):
    sub = _judged([("12p", A), ("12p", B), ("8p", A)])
    before = list(Evaluation.objects.filter(candidate__submission=sub).values_list("pk", "workload_version", "speedup"))
    assert _rescore("--submission", str(sub.pk)).count("0 new rows") == 2  # nothing changed: nothing to do
    factories.bump_workload(monkeypatch)
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        out = _rescore("--submission", str(sub.pk))
    assert "rescore 1/1: submission #%d: 2 new rows (2 queued, 0 reused)" % sub.pk in out
    new = Evaluation.objects.filter(candidate__submission=sub, workload_version=2)
    assert new.count() == 2 and {e.candidate.workload.wid for e in new} == {"12p"}
    assert {e.state for e in new} == {Evaluation.QUEUED} and {e.lane for e in new} == {"background"}
    assert sent == [(sorted(e.pk for e in new), new[0].queue)]
    # the earlier rows are untouched
    assert all(Evaluation.objects.filter(pk=pk, workload_version=v, speedup=s).exists() for pk, v, s in before)
    # idempotent by version
    assert "0 new rows" in _rescore("--submission", str(sub.pk))
    assert Evaluation.objects.filter(candidate__submission=sub).count() == 5
    # the worker measures them; the page shows old and new side by side
    for e in new:
        runner.finish(
            runner.claim(e.pk, "w"),
            {"outcome": "correct_faster", "speedup": 1.25, "speedup_ci": [1.2, 1.3], "message": ""},
            Evaluation.DONE,
        )
    rebuild_submission(sub)
    cache.clear()
    from django.test import Client

    html = Client().get(f"/submissions/{sub.pk}/").content.decode()
    assert "1 of 2 workloads evaluated under an earlier version (1 re-scored under the current one)" in html
    assert "2.00×" in html and "1.25×" in html


def test_identical_code_judged_under_the_current_version_is_reused(sent, monkeypatch):
    old = _judged([("12p", A)])
    factories.bump_workload(monkeypatch)
    _judged([("12p", A)], speedup=3.0)  # a later upload of the same code, measured under version 2
    out = _rescore("--submission", str(old.pk))
    assert "1 new rows (0 queued, 1 reused)" in out
    ev = Evaluation.objects.get(candidate__submission=old, workload_version=2)
    assert ev.reused_from is not None and ev.speedup == pytest.approx(3.0)


def test_choose_by_workload_and_by_top(sent, monkeypatch):
    a = _judged([("12p", A), ("8p", A)], speedup=4.0)
    b = _judged([("8p", B)], speedup=1.5)
    c = _judged([("12p", B)], speedup=2.0, published=False)
    factories.bump_workload(monkeypatch)
    out = _rescore("--workload", "12p-rmsnorm")
    assert f"submission #{a.pk}" in out and f"submission #{c.pk}" in out and f"submission #{b.pk}" not in out
    assert "rescored 2 submissions: 2 new rows" in out
    assert not Evaluation.objects.filter(candidate__submission=a, candidate__workload__wid="8p", workload_version=2)
    for s in (a, b, c):
        rebuild_submission(s)
    out = _rescore("--top", "1", "--hardware", "cpu")
    assert f"submission #{a.pk}" in out and "rescored 1 submissions: 0 new rows" in out
    with pytest.raises(CommandError, match="--top needs --hardware"):
        _rescore("--top", "1")
    with pytest.raises(CommandError, match="nothing chosen"):
        _rescore()
    with pytest.raises(CommandError, match="no submission 999999"):
        _rescore("--submission", "999999")


def test_staff_action_rescores_and_others_cannot(sent, monkeypatch, client):
    from django.contrib.auth import get_user_model

    sub = _judged([("12p", A), ("8p", A)])
    factories.bump_workload(monkeypatch)
    url = f"/submissions/{sub.pk}/rescore/"
    User = get_user_model()
    client.force_login(User.objects.create_user("plain", password="pw-plain-123"))
    assert client.post(url).status_code in (302, 403)
    assert not Evaluation.objects.filter(candidate__submission=sub, workload_version=2).exists()
    client.force_login(User.objects.create_user("boss", password="pw-boss-123", is_staff=True))
    assert 'action="/submissions/%d/rescore/"' % sub.pk in client.get(f"/submissions/{sub.pk}/").content.decode()
    r = client.post(url, follow=True)
    assert "1 new evaluations under the current workload and harness versions" in r.content.decode()
    assert Evaluation.objects.filter(candidate__submission=sub, workload_version=2).count() == 1
    r = client.post(url, follow=True)
    assert "nothing to re-score" in r.content.decode()
    assert client.get(url).status_code == 405


def test_rescore_after_a_harness_bump_creates_rows_once(sent, monkeypatch, client):
    sub = _judged([("12p", A), ("8p", A)])
    assert "0 new rows" in _rescore("--submission", str(sub.pk))
    factories.bump_harness(monkeypatch, "9.0.0")
    out = _rescore("--submission", str(sub.pk))
    assert f"rescore 1/1: submission #{sub.pk}: 2 new rows (2 queued, 0 reused)" in out
    new = Evaluation.objects.filter(candidate__submission=sub, harness_version="9.0.0")
    assert new.count() == 2 and {e.state for e in new} == {Evaluation.QUEUED}
    assert {e.workload_version for e in new} == {1}  # same workload version, another harness
    assert "0 new rows" in _rescore("--submission", str(sub.pk))  # idempotent: a queued row is current
    assert "0 new rows" in _rescore("--earlier")  # nothing of an earlier version left to schedule
    for e in new:
        factories.judge(e.pk, factories.judged_record("correct_faster", 1.25))
    assert "0 new rows" in _rescore("--submission", str(sub.pk))  # still nothing new once measured
    assert Evaluation.objects.filter(candidate__submission=sub).count() == 4
    rebuild_submission(sub)
    html = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert "2 of 2 workloads evaluated under an earlier harness (2 re-scored under the current harness)" in html
    assert "2.00×" in html and "1.25×" in html


def test_earlier_chooses_every_submission_with_earlier_results(sent, monkeypatch):
    a = _judged([("12p", A)])
    b = _judged([("8p", B)])
    factories.bump_workload(monkeypatch)  # 12p version 2: only a has an earlier result
    out = _rescore("--earlier")
    assert f"submission #{a.pk}: 1 new rows" in out and f"#{b.pk}" not in out
    factories.bump_harness(monkeypatch, "9.0.0")  # now both have
    out = _rescore("--earlier", "--hardware", "cpu")
    assert "rescored 2 submissions: 2 new rows" in out


def test_wait_shows_progress_until_the_new_rows_are_evaluated(sent, monkeypatch, capsys):
    from leaderboard.management.commands import rescore as command

    sub = _judged([("12p", A), ("8p", A), ("8p", B)])
    factories.bump_harness(monkeypatch, "9.0.0")
    seen = []

    def worker(seconds):  # the command polls; a worker measures one row between two polls
        row = Evaluation.objects.filter(candidate__submission=sub, state=Evaluation.QUEUED).first()
        seen.append(row.pk)
        factories.judge(row.pk, factories.judged_record("correct_faster" if len(seen) < 3 else "incorrect", 1.5))

    monkeypatch.setattr(command.time, "sleep", worker)
    out = _rescore("--submission", str(sub.pk), "--wait")
    assert len(seen) == 3 and "all 3 new rows evaluated (2 correct_faster, 1 incorrect)" in out
    bar = capsys.readouterr().err
    assert "re-scoring: 100%" in bar and "3/3" in bar


def test_wait_stops_at_its_timeout_and_says_what_is_left(sent, monkeypatch):
    sub = _judged([("12p", A), ("8p", A)])
    factories.bump_harness(monkeypatch, "9.0.0")
    out = _rescore("--submission", str(sub.pk), "--wait", "--timeout", "0")
    assert "0/2 new rows evaluated (none yet); 2 still queued or running" in out


def test_the_page_follows_a_rescore_to_the_end(sent, monkeypatch):
    from evaluator.progress import submission_progress

    sub = _judged([("12p", A), ("8p", A)])
    other = _judged([("12p", B), ("8p", B)])
    assert submission_progress(sub)["finished"]
    factories.bump_harness(monkeypatch, "9.0.0")
    rescore_submission(sub)
    prog = submission_progress(sub)
    assert (prog["done"], prog["total"], prog["finished"]) == (0, 2, False)
    first = Evaluation.objects.filter(candidate__submission=sub, state=Evaluation.QUEUED).first()
    factories.judge(first.pk, factories.judged_record("correct_faster", 1.5))
    assert (submission_progress(sub)["done"], submission_progress(sub)["percent"]) == (1, 50.0)
    # a re-score of one workload only: the other candidate's earlier result counts as done
    assert rescore_submission(other, workload_wid="12p")["scheduled"] == 1
    prog = submission_progress(other)
    assert (prog["done"], prog["total"]) == (1, 2)
