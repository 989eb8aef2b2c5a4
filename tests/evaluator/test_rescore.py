"""manage.py rescore: new rows under the current workload versions, through the intake's own
scheduling, idempotent by version; the earlier rows stay and the page shows both."""

import dataclasses
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from catalog.models import Workload
from evaluator import pipeline, reuse, runner
from evaluator.models import Evaluation
from jaxbench import workloads as registry
from leaderboard.aggregates.refresh import rebuild_submission
from tests import factories

pytestmark = pytest.mark.django_db

A = "def workload(x, scale):\n    return x * scale\n"
B = "def workload(x, scale):\n    return x * scale  # b\n"


@pytest.fixture
def sent(monkeypatch):
    calls = []
    fake = lambda ids, queue: calls.append((list(ids), queue))
    monkeypatch.setattr(pipeline, "enqueue_many", fake)
    monkeypatch.setattr(runner, "enqueue_many", fake)
    return calls


def _judged(codes, speedup=2.0, published=True):
    """A submission whose every candidate was measured (version current at the time)."""
    sub = factories.submission(codes, published=published)
    for ev_id in pipeline.schedule_submission(sub):
        ev = runner.claim(ev_id, "w")
        rec = {
            "outcome": "correct_faster",
            "speedup": speedup,
            "speedup_ci": [speedup * 0.9, speedup * 1.1],
            "message": "",
            "harness_version": runner.HARNESS_VERSION,
            "jax_version": reuse.jax_version(),
            "profile": "small",
        }
        runner.finish(ev, rec, Evaluation.DONE)
    return sub


def _rescore(*args):
    out = StringIO()
    call_command("rescore", *args, stdout=out)
    return out.getvalue()


def _bump(monkeypatch, wid="12p", version=2):
    """Version ``version`` of ``wid`` synced to the catalogue and in the worker's registry."""
    Workload.objects.filter(wid=wid).update(version=version)
    real = registry.get
    bumped = dataclasses.replace(real(wid), version=version)
    monkeypatch.setattr(registry, "get", lambda name: bumped if real(name).id == wid else real(name))


def test_rescore_creates_current_version_rows_once(sent, monkeypatch, django_capture_on_commit_callbacks):
    sub = _judged([("12p", A), ("12p", B), ("8p", A)])
    before = list(Evaluation.objects.filter(candidate__submission=sub).values_list("pk", "workload_version", "speedup"))
    assert _rescore("--submission", str(sub.pk)).count("0 new rows") == 2  # nothing changed: nothing to do
    _bump(monkeypatch)
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
    _bump(monkeypatch)
    _judged([("12p", A)], speedup=3.0)  # a later upload of the same code, measured under version 2
    out = _rescore("--submission", str(old.pk))
    assert "1 new rows (0 queued, 1 reused)" in out
    ev = Evaluation.objects.get(candidate__submission=old, workload_version=2)
    assert ev.reused_from is not None and ev.speedup == pytest.approx(3.0)


def test_choose_by_workload_and_by_top(sent, monkeypatch):
    a = _judged([("12p", A), ("8p", A)], speedup=4.0)
    b = _judged([("8p", B)], speedup=1.5)
    c = _judged([("12p", B)], speedup=2.0, published=False)
    _bump(monkeypatch)
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
    _bump(monkeypatch)
    url = f"/submissions/{sub.pk}/rescore/"
    User = get_user_model()
    client.force_login(User.objects.create_user("plain", password="pw-plain-123"))
    assert client.post(url).status_code in (302, 403)
    assert not Evaluation.objects.filter(candidate__submission=sub, workload_version=2).exists()
    client.force_login(User.objects.create_user("boss", password="pw-boss-123", is_staff=True))
    assert 'action="/submissions/%d/rescore/"' % sub.pk in client.get(f"/submissions/{sub.pk}/").content.decode()
    r = client.post(url, follow=True)
    assert "1 new evaluations under the current workload versions" in r.content.decode()
    assert Evaluation.objects.filter(candidate__submission=sub, workload_version=2).count() == 1
    r = client.post(url, follow=True)
    assert "nothing to re-score" in r.content.decode()
    assert client.get(url).status_code == 405
