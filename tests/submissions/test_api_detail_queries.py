"""The submission detail, its evaluations and the own and staff lists over the API cost the same
few queries whatever the submissions' sizes and number, and none groups by a subquery nor groups
the submission rows (issue 34 item 8: ``Count("candidates")`` beside the held-count subquery put
that correlated subquery in GROUP BY, evaluated once per candidate: minutes on SQLite for a
7,202-candidate submission). Also run on PostgreSQL (the integration variants)."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluator.models import Evaluation
from leaderboard.aggregates.refresh import rebuild_submission
from leaderboard.models import SubmissionSummary
from submissions import intake
from submissions.models import Candidate
from tests.submissions.conftest import kernel

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

N_CANDIDATES = 3000
HELD_EVERY = 50  # every 50th candidate's main row is held for review: 60 of them


def outer_sql(sql: str) -> str:
    """The statement with every parenthesised part (subqueries, IN lists, calls) removed."""
    prev = None
    while prev != sql:
        prev, sql = sql, re.sub(r"\([^()]*\)", "", sql)
    return sql


def group_by_clauses(sql: str) -> list[str]:
    """What every GROUP BY of the statement (its subqueries' too) groups by."""
    return re.findall(r"GROUP BY (.*?)(?:\bORDER BY\b|\bLIMIT\b|\bHAVING\b|$)", sql, re.S | re.I)


def assert_linear(statements: list[str]) -> None:
    """The shape of the quadratic statement of issue 34 item 8 is absent: nothing groups by a
    (correlated) subquery, and no statement groups the submission rows themselves."""
    for sql in statements:
        for clause in group_by_clauses(sql):
            assert "SELECT" not in clause.upper(), sql
        outer = outer_sql(sql).upper()
        if 'FROM "SUBMISSIONS_SUBMISSION"' in outer:
            assert "GROUP BY" not in outer, sql


def big_submission(people, catalog):
    """A published submission of N_CANDIDATES candidates, each with a finished main row and a
    pre-check row, bulk-inserted."""
    sub = intake.create_kernel_submission(
        people.team_a, people.alice, "cpu", {"method": "Big", "upload_key": "big"}, [("12p.py", kernel())]
    )
    hw = sub.hardware
    Candidate.objects.bulk_create(
        [
            Candidate(
                submission=sub,
                workload=catalog[i % len(catalog)],
                index=i // len(catalog) + 1,
                code="x",
                code_sha256="0" * 64,
            )
            for i in range(N_CANDIDATES - 1)
        ],
        batch_size=1000,
    )
    Evaluation.objects.filter(candidate__submission=sub).delete()
    rows = []
    for j, cid in enumerate(sub.candidates.order_by("id").values_list("id", flat=True)):
        held = Evaluation.HELD if j % HELD_EVERY == 0 else ""
        rows.append(Evaluation(candidate_id=cid, hardware=hw, stage=Evaluation.PRECHECK, state="done", code_sha256="0"))
        rows.append(
            Evaluation(
                candidate_id=cid,
                hardware=hw,
                stage=Evaluation.MAIN,
                state="done",
                outcome="correct_faster",
                speedup=1.2,
                code_sha256="0",
                review=held,
            )
        )
    Evaluation.objects.bulk_create(rows, batch_size=1000)
    sub.publish()
    return sub


def small_submission(people):
    sub = intake.create_kernel_submission(
        people.team_b, people.bob, "cpu", {"method": "Small", "upload_key": "small"}, [("12p.py", kernel())]
    )
    sub.publish()
    return sub


def get(client, path, **params):
    with CaptureQueriesContext(connection) as ctx:
        r = client.get(path, params)
    assert r.status_code == 200, r.content
    return r.json(), [q["sql"] for q in ctx.captured_queries]


def test_detail_and_evaluations_query_shape_is_independent_of_size(api, people, catalog):
    big, small = big_submission(people, catalog), small_submission(people)
    anonymous = api()

    detail, detail_sql = get(anonymous, f"/api/v1/submissions/{big.pk}/")
    assert detail["candidates"] == N_CANDIDATES and detail["held_for_review"] == N_CANDIDATES // HELD_EVERY
    page, evals_sql = get(anonymous, f"/api/v1/submissions/{big.pk}/evaluations/", page_size=5)
    assert page["count"] == 2 * N_CANDIDATES and len(page["results"]) == 5
    held, _ = get(anonymous, f"/api/v1/submissions/{big.pk}/evaluations/", outcome="held_for_review")
    assert held["count"] == N_CANDIDATES // HELD_EVERY

    assert_linear(detail_sql + evals_sql)
    # the evaluations list needs only the submission's visibility, not its counts
    assert not any("submissions_candidate" in sql and "COUNT" in sql and "evaluator" not in sql for sql in evals_sql)

    # the same statements for a one-candidate submission
    small_detail, small_detail_sql = get(anonymous, f"/api/v1/submissions/{small.pk}/")
    assert small_detail["candidates"] == 1 and small_detail["held_for_review"] == 0
    _, small_evals_sql = get(anonymous, f"/api/v1/submissions/{small.pk}/evaluations/", page_size=5)
    assert len(detail_sql) == len(small_detail_sql) <= 4
    assert len(evals_sql) == len(small_evals_sql) <= 4


def test_counts_come_from_the_summary_once_there_is_one(api, people, catalog):
    """A submission's candidates are counted once, by its summary (leaderboard aggregates): the
    detail then reads that count, and counts no candidate rows."""
    big = big_submission(people, catalog)
    rebuild_submission(big)
    assert SubmissionSummary.objects.filter(submission=big, candidates_total=N_CANDIDATES).exists()
    detail, sql = get(api(), f"/api/v1/submissions/{big.pk}/")
    assert detail["candidates"] == N_CANDIDATES and detail["held_for_review"] == N_CANDIDATES // HELD_EVERY
    assert not any('FROM "submissions_candidate"' in q and "COUNT" in q.upper() for q in sql)
    assert_linear(sql)


def test_own_and_staff_lists_count_each_submission_in_the_same_statements(api, people, catalog):
    mine = intake.create_kernel_submission(
        people.team_a, people.alice, "cpu", {"method": "Two"}, [("12p.py", kernel()), ("8p.py", kernel())]
    )
    get(api(people.tokens["alice"]), "/api/v1/submissions/")  # the token's first use is written once
    _, few_sql = get(api(people.tokens["alice"]), "/api/v1/submissions/")
    big = big_submission(people, catalog)
    listed, sql = get(api(people.tokens["alice"]), "/api/v1/submissions/")
    counts = {s["id"]: (s["candidates"], s["held_for_review"]) for s in listed["results"]}
    assert counts == {big.pk: (N_CANDIDATES, N_CANDIDATES // HELD_EVERY), mine.pk: (2, 0)}
    assert len(sql) == len(few_sql)
    assert_linear(sql)

    people.alice.is_staff = True  # staff: every team's submissions
    people.alice.save(update_fields=["is_staff"])
    other = small_submission(people)
    listed, staff_sql = get(api(people.tokens["alice"]), "/api/v1/submissions/", page_size=1000)
    counts = {s["id"]: s["candidates"] for s in listed["results"]}
    assert counts == {big.pk: N_CANDIDATES, mine.pk: 2, other.pk: 1}
    assert len(staff_sql) <= len(sql)  # staff: no membership to look up
    assert_linear(staff_sql)


def test_an_evaluations_page_sorts_ids_then_reads_only_its_rows(api, people, catalog):
    """Issue 34 item 8: a page of evaluations is sorted and cut out as ids (the covering
    indexes), then only its rows are read, with only the columns the list shows: sorting and
    skipping whole rows, each with its record, took most of the last 250-page of a 7,200-sample
    submission. The same page, in the same order."""
    big = big_submission(people, catalog)
    expected = list(
        Evaluation.objects.filter(candidate__submission=big)
        .order_by("candidate__workload__number", "candidate__index", "stage", "id")
        .values_list("id", flat=True)
    )
    page, sql = get(api(), f"/api/v1/submissions/{big.pk}/evaluations/", page_size=250, page=3)
    assert [e["id"] for e in page["results"]] == expected[500:750]
    assert page["count"] == len(expected) and page["results"][0]["log"].endswith(f"/evaluations/{expected[500]}/log/")
    paged = [q for q in sql if "LIMIT" in q.upper() and "evaluator_evaluation" in q]
    assert len(paged) == 1 and '"evaluator_evaluation"."record"' not in paged[0], paged
    rows = [q for q in sql if '"evaluator_evaluation"."record"' in q]
    assert len(rows) == 1 and '"evaluator_evaluation"."id" IN (' in rows[0] and "LIMIT" not in rows[0].upper()
    for unlisted in (
        '"evaluator_evaluation"."failures"',
        '"submissions_candidate"."code"',
        '"catalog_workload"."shapes"',
    ):
        assert unlisted not in rows[0], unlisted
