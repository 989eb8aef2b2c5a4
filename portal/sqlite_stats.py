"""Planner statistics that survive a migration on SQLite.

SQLite plans with ``sqlite_stat1``, which ``ANALYZE`` writes; an index a migration creates has no
row there until the next ``ANALYZE``, and the planner then takes it for very selective. On the
load benchmark's analysed database (1.46 M evaluations) the queue index rebuilt by a migration
(``evaluator`` 0009) was chosen for ``state = 'done'`` and a 7,202-sample submission page took
1.9 s instead of 40 ms, until ``ANALYZE``. So after every ``migrate``, each table that has
statistics but lacks some of its indexes' is analysed again (1.2 s for that table); a database
never analysed is left to the planner's defaults, as before."""

from __future__ import annotations

from django.db import connections


def analyse_tables_missing_index_statistics(using: str = "default", **kwargs) -> list[str]:
    """ANALYZE each table with rows in ``sqlite_stat1`` and an index without; the tables done."""
    conn = connections[using]
    if conn.vendor != "sqlite":
        return []
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
        if cur.fetchone() is None:
            return []
        cur.execute("SELECT tbl, idx FROM sqlite_stat1")
        have = set(cur.fetchall())
        stale = []
        for table in sorted({t for t, _ in have}):
            cur.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s", [table])
            if any((table, name) not in have for (name,) in cur.fetchall()):
                stale.append(table)
        for table in stale:
            cur.execute(f'ANALYZE "{table}"')
    return stale
