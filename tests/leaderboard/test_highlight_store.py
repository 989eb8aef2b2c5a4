"""The kernels a submission page shows are highlighted ahead (issue 34, item 8): no visitor's
first view of a page highlights its sources on the request.

A plain submission's kernels at intake, a trace's best sample of a workload when its evaluation
is folded (not the other samples), the backfill command for a database filled before, and the
page itself reading them in one query."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from evaluator import runner
from evaluator.models import Evaluation
from leaderboard import highlight
from leaderboard.models import HighlightedSource
from submissions.models import Candidate, Submission
from tests.leaderboard.conftest import make_submission, make_team
from tests.leaderboard.test_held_review import speed_record


def _long_kernel(i: int) -> str:
    body = "".join(f"    y = jnp.tanh(y) * {j}.0 + x  # step {j}\n" for j in range(60))
    return f"# kernel {i}\nimport jax.numpy as jnp\n\ndef workload(x):\n    y = x\n{body}    return y\n"


def _finish(cand: Candidate, speedup: float) -> None:
    ev = Evaluation.objects.create(
        candidate=cand,
        hardware=cand.submission.hardware,
        stage=Evaluation.MAIN,
        state=Evaluation.RUNNING,
        code_sha256=cand.code_sha256,
    )
    runner.finish(ev, speed_record(speedup, speedup * 0.95, speedup * 1.05), Evaluation.DONE)


def test_a_plain_submissions_kernels_are_stored_at_intake_and_the_page_highlights_none(
    workloads, hardware, users, django_capture_on_commit_callbacks, monkeypatch
):
    team = make_team("Alpha Lab", users["alice"])
    with django_capture_on_commit_callbacks(execute=True):
        sub = Submission.objects.create(
            team=team, hardware=hardware["cpu"], kind=Submission.KERNELS, method="m", created_by=users["alice"]
        )
        for i, w in enumerate(workloads[:3]):
            Candidate.objects.create(submission=sub, workload=w, index=0, code=_long_kernel(i))
    shas = set(Candidate.objects.filter(submission=sub).values_list("code_sha256", flat=True))
    assert set(HighlightedSource.objects.values_list("code_sha256", flat=True)) == shas
    stored = HighlightedSource.objects.first()
    assert stored.renderer == highlight.RENDERER and 'class="highlight"' in stored.html

    sub.publish()
    highlight.highlighted.cache_clear()
    monkeypatch.setattr(highlight, "highlight", lambda *a, **k: pytest.fail("highlighted on the request"))
    cache.clear()
    r = Client().get(f"/submissions/{sub.pk}/")
    assert r.status_code == 200
    html = r.content.decode()
    # every kernel shown, each as the HTML stored at intake (Pygments refused on the request)
    assert all(row.html in html for row in HighlightedSource.objects.all())


def test_a_traces_best_sample_is_stored_when_folded_and_no_other(
    workloads, hardware, users, django_capture_on_commit_callbacks
):
    team = make_team("Alpha Lab", users["alice"])
    w = workloads[0]
    sub = make_submission(team, hardware["cpu"], {w: [("", None)] * 3}, evaluate=False)
    c0, c1, c2 = Candidate.objects.filter(submission=sub).order_by("index")
    with django_capture_on_commit_callbacks(execute=True):
        _finish(c0, 1.2)  # the best so far
        _finish(c1, 0.9)  # not the best: not shown, not stored
        _finish(c2, 1.5)  # the new best
    assert set(HighlightedSource.objects.values_list("code_sha256", flat=True)) == {c0.code_sha256, c2.code_sha256}


def test_a_highlighting_fault_never_touches_the_verdict(
    workloads, hardware, users, django_capture_on_commit_callbacks, monkeypatch
):
    team = make_team("Alpha Lab", users["alice"])
    sub = make_submission(team, hardware["cpu"], {workloads[0]: [("", None)]}, evaluate=False)
    cand = Candidate.objects.get(submission=sub)
    monkeypatch.setattr(highlight, "store", lambda *a: (_ for _ in ()).throw(RuntimeError("disk full")))
    with django_capture_on_commit_callbacks(execute=True):
        _finish(cand, 1.2)
    ev = Evaluation.objects.get(candidate=cand)
    assert ev.state == Evaluation.DONE and ev.speedup == pytest.approx(1.2)
    assert not HighlightedSource.objects.exists()


def test_the_backfill_command_stores_what_the_pages_show(workloads, hardware, users, capsys):
    team = make_team("Alpha Lab", users["alice"])
    w1, w2 = workloads[0], workloads[1]
    trace = make_submission(
        team, hardware["cpu"], {w1: [("correct_faster", 1.2), ("correct_faster", 2.0)], w2: [("incorrect", None)]}
    )
    from leaderboard.aggregates.refresh import rebuild_submission

    rebuild_submission(trace)
    best = Candidate.objects.get(submission=trace, workload=w1, index=1)
    plain = make_submission(team, hardware["cpu"], {w1: [("correct_faster", 1.1)]}, kind=Submission.KERNELS)
    plain_code = Candidate.objects.get(submission=plain)
    assert not HighlightedSource.objects.exists()
    call_command("highlight_sources")
    assert "2 sources highlighted for 2 submissions" in capsys.readouterr().out
    assert set(HighlightedSource.objects.values_list("code_sha256", flat=True)) == {
        best.code_sha256,
        plain_code.code_sha256,
    }
    call_command("highlight_sources")  # again: nothing new
    assert "0 sources highlighted" in capsys.readouterr().out


def test_stored_html_of_another_renderer_is_not_read_and_is_replaced(workloads, hardware, users):
    team = make_team("Alpha Lab", users["alice"])
    sub = make_submission(team, hardware["cpu"], {workloads[0]: [("correct_faster", 1.1)]}, kind=Submission.KERNELS)
    c = Candidate.objects.get(submission=sub)
    HighlightedSource.objects.create(code_sha256=c.code_sha256, renderer="pygments 0.1", html="<b>old</b>")
    assert highlight.highlighted_many([(c.code_sha256, c.code)])[c.code_sha256] == highlight.highlighted(c.code)
    assert highlight.store([(c.code_sha256, c.code)]) == 1
    row = HighlightedSource.objects.get()
    assert row.renderer == highlight.RENDERER and row.html == highlight.highlighted(c.code)


def test_what_is_stored_ahead_is_what_the_page_shows(workloads, hardware, users, monkeypatch):
    """One definition of the shown kernels (``leaderboard.shown_sources``): the page's sources and
    the ones the backfill stores are the same, for a plain submission past MAX_SOURCES (its first
    ones by workload, then index) and for a trace (each workload's best sample only)."""
    from leaderboard import shown_sources as shown
    from leaderboard.aggregates.refresh import rebuild_submission

    monkeypatch.setattr(shown, "MAX_SOURCES", 3)
    team = make_team("Alpha Lab", users["alice"])
    w1, w2 = workloads[0], workloads[1]
    plain = make_submission(
        team, hardware["cpu"], {w2: [("correct_faster", 1.1)] * 2, w1: [("correct_faster", 1.1)] * 2}, kind="kernels"
    )
    trace = make_submission(
        team, hardware["cpu"], {w1: [("correct_faster", 1.2), ("correct_faster", 2.0)], w2: [("correct_faster", 1.4)]}
    )
    rebuild_submission(trace)
    for sub in (plain, trace):
        sub.publish()
    call_command("highlight_sources")
    stored = set(HighlightedSource.objects.values_list("code_sha256", flat=True))

    def page_shows(sub):
        cache.clear()
        html = Client().get(f"/submissions/{sub.pk}/").content.decode()
        return {(w, int(i)) for w, i in re.findall(r'id="source-([^"]+)-(\d+)"', html)}

    plain_first = list(Candidate.objects.filter(submission=plain).order_by("workload__number", "index")[:3])
    assert [sha for sha, _ in shown.shown_sources(plain)] == [c.code_sha256 for c in plain_first]
    assert page_shows(plain) == {(c.workload.wid, c.index) for c in plain_first}
    best = [
        Candidate.objects.get(submission=trace, workload=w1, index=1),
        Candidate.objects.get(submission=trace, workload=w2, index=0),
    ]
    assert {sha for sha, _ in shown.shown_sources(trace)} == {c.code_sha256 for c in best}
    assert page_shows(trace) == {(c.workload.wid, c.index) for c in best}
    assert stored == {c.code_sha256 for c in plain_first + best}
