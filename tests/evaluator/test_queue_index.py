"""Counting the queue's waiting and running rows reads the queue index alone (issue 34 item 8):
the health page's count took ~0.1 s on PostgreSQL with 21,600 queued rows (three 7,200-sample
uploads) when it read each row for its lane."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluator import health


@pytest.mark.django_db
def test_the_health_pages_count_is_answered_from_the_queue_index():
    if connection.vendor != "sqlite":
        pytest.skip("the plan is read with SQLite's EXPLAIN QUERY PLAN")
    with CaptureQueriesContext(connection) as ran:
        health.status()
    counts = [q["sql"] for q in ran.captured_queries if "COUNT(*)" in q["sql"] and "evaluator_evaluation" in q["sql"]]
    assert len(counts) == 1, counts
    with connection.cursor() as cur:
        cur.execute("EXPLAIN QUERY PLAN " + counts[0])
        plan = " | ".join(str(row[-1]) for row in cur.fetchall())
    assert "COVERING INDEX evaluation_queue_idx" in plan, plan
