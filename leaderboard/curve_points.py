"""One budget's record of a summary's packed curves, cut out by the database.

A board row needs each curve at one budget N only. Fetching whole blobs (two of ~9 KB per
summary, hundreds of summaries) dominated a cold board on PostgreSQL; ``curve_point`` makes the
database return the 64-byte record instead (``jaxbench.metrics.curves.record_start`` is its
Python twin: the full budget is the first record, so PostgreSQL reads a prefix of the value).
"""

from __future__ import annotations

from django.db.models import BinaryField, Value
from django.db.models.functions import Greatest, Length, Substr

from jaxbench.metrics.curves import HEADER, RECORD


def curve_point(field: str, n: int | None) -> Substr:
    """SQL for the record of ``field`` (a packed curves column) at budget ``n`` (None: every
    sample): bytes, empty when there is no curve or n == 0."""
    if n is None:
        start = Value(HEADER + 1)  # SUBSTRING counts from 1
    else:
        stored = (Length(field) - Value(HEADER)) / Value(RECORD)
        start = Value(HEADER + 1) + Value(RECORD) * Greatest(stored - Value(n), Value(0))
    return Substr(field, start, RECORD, output_field=BinaryField())
