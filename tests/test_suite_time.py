"""benchmarks/suite_time.py reads each tier's banner and pytest's last line out of make's output."""

from benchmarks.suite_time import tiers

LOG = """
== tests: embedded (SQLite + embedded Redis), on both cores ==
.venv/bin/python -m pytest -m "not integration" -n 2
=========== 2879 passed, 158 skipped, 4 xfailed in 800.62s (0:13:20) ===========
== integration tests: PostgreSQL + Redis ==
=================== 1 failed, 16 passed, 3063 deselected in 358.05s (0:05:58) ===================
== tests: embedded (SQLite + embedded Redis), alone ==
================ 5 passed, 3075 deselected in 7.39s ================
"""


def test_each_tier_with_its_counts_and_seconds():
    assert tiers(LOG) == [
        ("tests: embedded (SQLite + embedded Redis), on both cores", "2879 passed, 158 skipped, 4 xfailed", 800.62),
        ("integration tests: PostgreSQL + Redis", "1 failed, 16 passed, 3063 deselected", 358.05),
        ("tests: embedded (SQLite + embedded Redis), alone", "5 passed, 3075 deselected", 7.39),
    ]


def test_a_log_without_a_pytest_summary_has_no_tiers():
    assert tiers("make: *** [Makefile:60: lint] Error 1\n") == []
