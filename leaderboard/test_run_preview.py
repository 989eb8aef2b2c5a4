"""Where a test run would rank: its owner's preview on the board (docs/DESIGN.md, "Test runs").

The preview row is built from the test run's own summary by the board's row builder
(``data._row``) at the board's query (set, budget N, p), and ``place`` (pure) ranks it among the
board's ranked rows with the board's ``rank_rows``: the rank it would get were it published now.
A test run keeps its id when promoted, so even the order among equal rows is the one it would get.
Only a fully evaluated test run is placed, as only a fully evaluated submission is ranked.

Previews are computed for their owner's request only and never cached: the board's cache, shared
by every visitor, holds public rows only (``leaderboard.data``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jaxbench import metrics
from jaxbench.metrics.curves import unpack_point
from leaderboard import board_versions
from leaderboard.curve_points import curve_point

# the board's own row builder and its fields: a preview row is a board row, built the same way
from leaderboard.data import (
    _SHOWN_ON,
    _SUMMARY_FIELDS,
    DEFAULT_SORT,
    Query,
    _row,
    _slow_fast_p,
    expert_geomean,
    experts_for,
    leaderboard_data,
    rank_rows,
    set_members,
    sort_rows,
)
from leaderboard.models import SubmissionSummary
from submissions.intake.test_runs import LABEL
from submissions.models import Submission


def place(ranked: list[Mapping], preview: Mapping, sort: str = DEFAULT_SORT) -> dict:
    """Where ``preview`` (a board row) would stand among ``ranked`` (the board's ranked rows, left
    unchanged): ``{"rank", "tied", "of": rows with it, "row": the preview ranked, "above",
    "below": its neighbours in the board's ``sort`` order, as the board shows them, or None}``."""
    rows = [dict(r, preview=False) for r in ranked] + [dict(preview, preview=True)]
    rank_rows(rows)
    me = next(r for r in rows if r["preview"])
    shown = sort_rows(rows, sort)
    at = next(i for i, r in enumerate(shown) if r["preview"])
    public = {r["submission"]: r for r in ranked}

    def neighbour(i: int):
        return public[shown[i]["submission"]] if 0 <= i < len(shown) else None

    return {
        "rank": me["rank"],
        "tied": me["tied"],
        "of": len(rows),
        "row": me,
        "above": neighbour(at - 1),
        "below": neighbour(at + 1),
    }


def preview_rows(runs: Iterable[int] | object, q: Query) -> list[dict]:
    """Board rows of the fully evaluated test runs among ``runs`` (ids or a queryset) on
    ``q.hardware``, at ``q``'s set, budget and p; each ``url`` is the test run's page."""
    points = {"point": curve_point(f"curves_{q.wset}", q.n), "expert_point": curve_point("curves_expert", q.n)}
    raw = list(
        SubmissionSummary.objects.filter(
            submission__in=runs, hardware=q.hardware, source=SubmissionSummary.EVALUATED, complete=True
        )
        .values(*_SUMMARY_FIELDS, shown_on=_SHOWN_ON, **points)
        .order_by("submission_id")
    )
    if not raw:
        return []
    members = set_members()
    sizes = {name: len(ws) for name, ws in members.items()}
    expert_gm = expert_geomean(members["expert"], experts_for(q.hardware))
    rows = [_row(s, q, unpack_point(s["point"]), unpack_point(s["expert_point"]), sizes, expert_gm) for s in raw]
    if q.p != metrics.DEFAULT_P:
        _slow_fast_p(rows, q, members[q.wset], {})
    for r in rows:
        r["url"] = f"/test-runs/{r['submission']}/"
    return rows


def for_board(user, q: Query, ranked: list[Mapping]) -> list[dict]:
    """The previews of ``user``'s test runs on the board ``q`` whose ranked rows are ``ranked``
    (one query when they have none). Only on the current versions' board: a test run is measured
    under them."""
    if not user.is_authenticated or q.versions != board_versions.CURRENT:
        return []
    runs = Submission.test_runs.owned_by(user).filter(hardware=q.hardware).values("pk")
    return [dict(place(ranked, row, q.sort), run=row["submission"], label=LABEL) for row in preview_rows(runs, q)]


def for_test_run(run: Submission) -> dict | None:
    """Where ``run`` would rank on its hardware's default board (every workload, every sample,
    the current versions), or None until it is fully evaluated."""
    q = Query(hardware=run.hardware)
    rows = preview_rows([run.pk], q)
    if not rows:
        return None
    board = leaderboard_data(q)
    return dict(
        place(board["rows"], rows[0], q.sort),
        run=run.pk,
        label=LABEL,
        board=f"/leaderboard/?{q.qs()}",
        board_name=f"the {run.hardware.slug} board (every workload, every sample)",
    )
