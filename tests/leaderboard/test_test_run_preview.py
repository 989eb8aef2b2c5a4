"""A test run's preview on the board (docs/DESIGN.md, "Test runs"): placed by the board's own
ranking exactly where the same results rank once submitted and published, shown to its owner
only, never cached for others; and no other page, list, export, API or chart shows a test run."""

from __future__ import annotations

import csv
import datetime
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone

from evaluator.models import Evaluation
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.data import Query, leaderboard_data
from leaderboard.test_run_preview import for_board, place
from submissions import intake
from submissions.models import Membership, Submission
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = pytest.mark.django_db

SECRET_TEAM = "Zed Quiet Lab"


def board_row(sub, geomean, lo, hi, solved=10.0, ugeomean=None):
    return {
        "submission": sub,
        "geomean": geomean,
        "geomean_low": lo,
        "geomean_high": hi,
        "ugeomean": ugeomean if ugeomean is not None else geomean,
        "solved": solved,
        "rank": None,
        "tied": False,
    }


def ranked(rows):
    from leaderboard.data import rank_rows

    rows = [dict(r) for r in rows]
    rank_rows(rows)
    return rows


# -- place(): pure ---------------------------------------------------------------------------


def test_place_on_an_empty_board():
    p = place([], board_row(9, 1.2, 1.1, 1.3))
    assert (p["rank"], p["tied"], p["of"], p["above"], p["below"]) == (1, False, 1, None, None)


def test_place_between_two_rows_leaves_their_ranks():
    board = ranked([board_row(1, 2.0, 1.9, 2.1), board_row(2, 1.1, 1.05, 1.15)])
    before = [dict(r) for r in board]
    p = place(board, board_row(9, 1.5, 1.4, 1.6))
    assert (p["rank"], p["tied"], p["of"]) == (2, False, 3)
    assert p["above"]["submission"] == 1 and p["below"]["submission"] == 2
    assert p["below"]["rank"] == 2  # the real row keeps its public rank
    assert board == before  # nothing of the board changed


def test_place_marks_a_tie_as_the_board_does_and_orders_by_id():
    board = ranked([board_row(1, 1.5, 1.3, 1.7), board_row(2, 1.0, 1.0, 1.0)])
    p = place(board, board_row(9, 1.45, 1.35, 1.55))  # overlaps row 1's interval
    assert (p["rank"], p["tied"]) == (1, True)
    equal = place(board, board_row(9, 1.5, 1.3, 1.7))  # equal in every key: the id decides
    assert equal["above"]["submission"] == 1 and equal["rank"] == 1 and equal["tied"]


def test_place_follows_the_boards_sort():
    board = ranked([board_row(1, 2.0, 1.9, 2.1, solved=3), board_row(2, 1.1, 1.05, 1.15, solved=20)])
    p = place(board, board_row(9, 1.5, 1.4, 1.6, solved=12), sort="-solved")
    assert p["rank"] == 2  # the rank is the ranking's; the neighbours are the sorted view's
    assert p["above"]["submission"] == 2 and p["below"]["submission"] == 1


# -- the preview is where the same results rank -----------------------------------------------


@pytest.fixture
def board(populated, users, workloads):
    """The populated cpu board with two more published entries timed side by side, and a test run
    of ``owner`` (in a team of their own) fully evaluated."""
    cpu, ws = populated["cpu"], workloads
    make_submission(
        populated["alice_team"],
        cpu,
        {w: [("correct_faster", 1.3, (1.2, 1.4))] for w in ws[:15]},
        kind="kernels",
        method="mid",
    )
    make_submission(
        populated["bob_team"],
        cpu,
        {w: [("correct_faster", 2.0, (1.8, 2.2))] for w in ws[:8]},
        kind="kernels",
        method="short",
    )
    for s in Submission.objects.all():
        rebuild_submission(s)
    owner = get_user_model().objects.create_user("zed", password="pw-zed-12345")
    carol = get_user_model().objects.create_user("carol", password="pw-carol-123")
    team = make_team(SECRET_TEAM, owner, carol)
    run = make_test_run(team, owner, cpu, {w: [("correct_faster", 1.5, (1.42, 1.58))] for w in ws[:12]})
    return {**populated, "run": run, "owner": owner, "teammate": carol, "team": team, "ws": ws}


def make_test_run(team, owner, hardware, samples):
    sub = make_submission(team, hardware, samples, kind="kernels", method="", model_name="", published=False)
    Submission._base_manager.filter(pk=sub.pk).update(
        test_run=True, created_by=owner, expires_at=timezone.now() + datetime.timedelta(days=7)
    )
    sub = Submission.test_runs.get(pk=sub.pk)
    rebuild_submission(sub)
    return sub


QUERIES = [{}, {"set": "production"}, {"set": "expert"}, {"n": "1"}, {"sort": "-solved"}, {"p": "1.25"}]


def test_the_preview_ranks_exactly_where_the_submission_ranks(board):
    run, owner = board["run"], board["owner"]
    previews = {}
    for params in QUERIES:
        q = Query.from_params({"hardware": "cpu", **params})
        (p,) = for_board(owner, q, leaderboard_data(q, use_cache=False)["rows"])
        assert p["run"] == run.pk and p["row"]["url"] == f"/test-runs/{run.pk}/"
        previews[str(params)] = p
    assert len({p["rank"] for p in previews.values()}) > 1  # the views differ: the check is not one number
    # submitted for the board and published, the same results take the previewed place
    intake.promote_test_run(run, owner, {"method": "promoted"}, publish=True)
    cache.clear()
    for params in QUERIES:
        q = Query.from_params({"hardware": "cpu", **params})
        rows = leaderboard_data(q, use_cache=False)["rows"]
        at = next(i for i, r in enumerate(rows) if r["submission"] == run.pk)
        real, p = rows[at], previews[str(params)]
        assert (real["rank"], real["tied"]) == (p["rank"], p["tied"]), params
        for key in ("geomean", "geomean_low", "geomean_high", "solved", "fast", "expert_pct", "correctness"):
            assert real[key] == p["row"][key], (params, key)
        assert len(rows) == p["of"]
        assert (rows[at - 1]["submission"] if at else None) == (p["above"] or {}).get("submission"), params
        below = rows[at + 1]["submission"] if at + 1 < len(rows) else None
        assert below == (p["below"] or {}).get("submission"), params


def test_no_preview_until_fully_evaluated_nor_on_other_versions(board):
    run, owner = board["run"], board["owner"]
    Evaluation.objects.filter(candidate__submission=run, candidate__workload=board["ws"][0]).update(
        state=Evaluation.QUEUED, outcome="", speedup=None
    )
    rebuild_submission(run)
    q = Query.from_params({"hardware": "cpu"})
    assert for_board(owner, q, leaderboard_data(q, use_cache=False)["rows"]) == []
    rebuild_submission(run)
    Evaluation.objects.filter(candidate__submission=run).update(state=Evaluation.DONE, outcome="correct_faster")
    rebuild_submission(run)
    assert for_board(owner, q, leaderboard_data(q)["rows"])
    q_all = Query.from_params({"hardware": "cpu", "versions": "all"})
    assert for_board(owner, q_all, leaderboard_data(q_all, use_cache=False)["rows"]) == []


# -- who sees it -----------------------------------------------------------------------------


def test_the_board_shows_the_preview_to_its_owner_only_and_never_caches_it(client, board):
    run, owner = board["run"], board["owner"]
    cache.clear()
    client.force_login(owner)
    html = client.get("/leaderboard/?hardware=cpu").content.decode()
    assert 'id="test-run-preview"' in html and f'data-test-run="{run.pk}"' in html
    assert "test run — private, not on the board" in html and "would be" in html
    assert f'data-submission="{run.pk}"' not in html  # never a board row
    # the same board, cached by the owner's request, for everyone else
    for who in (None, board["teammate"], get_user_model().objects.get(username="bob")):
        client.logout()
        if who is not None:
            client.force_login(who)
        other = client.get("/leaderboard/?hardware=cpu").content.decode()
        assert 'id="test-run-preview"' not in other and f"/test-runs/{run.pk}/" not in other
    client.force_login(owner)
    assert f'data-test-run="{run.pk}"' in client.get("/leaderboard/?hardware=cpu").content.decode()
    # its own page places it on its hardware's board
    page = client.get(f"/test-runs/{run.pk}/").content.decode()
    assert 'id="test-run-preview"' in page and "Where it would rank" in page


def _ids_in(data, keys=("submission", "id", "run")) -> set:
    """Every value of a submission-id key anywhere in a JSON document."""
    if isinstance(data, dict):
        found = {v for k, v in data.items() if k in keys and isinstance(v, int)}
        for v in data.values():
            found |= _ids_in(v, keys)
        return found
    if isinstance(data, list):
        return set().union(*(_ids_in(v, keys) for v in data)) if data else set()
    return set()


def _leaks(resp, run) -> list[str]:
    text = resp.content.decode()
    needles = [
        f"/submissions/{run.pk}/",
        f"/test-runs/{run.pk}/",
        f'data-submission="{run.pk}"',
        f'data-test-run="{run.pk}"',
    ]
    found = [n for n in needles if n in text]
    if resp["Content-Type"].startswith("application/json") and run.pk in _ids_in(json.loads(text)):
        found.append(f"id {run.pk} in the JSON")
    return found


def test_nobody_else_sees_a_test_run_anywhere(client, board):
    run = board["run"]
    wl = board["ws"][0]
    staff = get_user_model().objects.get(username="staff")
    Membership.objects.filter(user=staff).delete()
    pages = [
        "/leaderboard/?hardware=cpu",
        "/leaderboard/?hardware=cpu&set=production&n=1",
        "/leaderboard/?hardware=cpu&format=json",
        "/api/v1/leaderboard/?hardware=cpu",
        "/workloads/",
        f"/workloads/{wl.slug}/",
        f"/workloads/{wl.slug}/results.json",
        "/",
        "/health/",
        f"/compare/?s={board['a'].pk}&s={board['b'].pk}",
    ]
    gone = [
        f"/submissions/{run.pk}/",
        f"/submissions/{run.pk}/progress.json",
        f"/api/v1/submissions/{run.pk}/",
        f"/api/v1/submissions/{run.pk}/status/",
        f"/api/v1/submissions/{run.pk}/evaluations/",
        f"/api/v1/leaderboard/submissions/{run.pk}/",
        f"/api/v1/test-runs/{run.pk}/",
        f"/compare/?s={run.pk}&s={board['a'].pk}",
    ]
    ev = Evaluation.objects.filter(candidate__submission=run).first()
    gone.append(f"/api/v1/evaluations/{ev.pk}/log/")
    for who in (None, board["teammate"], staff, get_user_model().objects.get(username="bob")):
        client.logout()
        if who is not None:
            client.force_login(who)
            pages_now = pages + ["/submissions/", "/api/v1/submissions/", "/test-runs/", "/api/v1/test-runs/"]
        else:
            pages_now = pages
        cache.clear()
        for url in pages_now:
            resp = client.get(url)
            assert resp.status_code == 200, (who, url, resp.status_code)
            assert not _leaks(resp, run), (who, url, _leaks(resp, run))
            if who is None or who == staff:
                assert SECRET_TEAM not in resp.content.decode(), (who, url)
        csv_text = client.get("/leaderboard/?hardware=cpu&format=csv").content.decode()
        assert str(run.pk) not in [r["submission"] for r in csv.DictReader(io.StringIO(csv_text))]
        for url in gone:
            assert client.get(url).status_code in (401, 403, 404), (who, url)
        assert client.get(f"/test-runs/{run.pk}/").status_code in (302, 404)
    # staff's review queue leaves it out even when held
    Evaluation.objects.filter(pk=ev.pk).update(review=Evaluation.HELD)
    client.force_login(staff)
    assert f"/review/{ev.pk}/" not in client.get("/review/").content.decode()
