"""Insert many rows of one model fast, inside the caller's transaction.

``QuerySet.bulk_create`` builds a model instance per row and compiles a multi-row ``INSERT``
whose every value passes through the field's preparation: for a 7,200-sample trace (about
28 MB of code) that Python work, not the database, was most of the upload (profiled in
issue 13). Here the caller hands plain tuples of already-clean values:

* PostgreSQL: ``COPY ... FROM STDIN`` (psycopg 3), one stream, no SQL to parse per row;
* SQLite (and anything else): one prepared ``INSERT`` run by ``executemany``.

Every concrete column the caller does not name gets the model field's default, prepared once,
exactly as ``Model()`` + ``bulk_create`` would store it (``auto_now``/``auto_now_add`` get
now). Errors come out as Django's (``IntegrityError``, ...), like any query. No ``save()``,
no signals: the same contract as ``bulk_create``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connections, router
from django.utils import timezone

# Values of these field types go to the driver as they are (ints, str, float, None, bool);
# every other type (datetimes, JSON, decimals, UUIDs, ...) is prepared by its field.
_PLAIN = frozenset(
    {
        "AutoField",
        "BigAutoField",
        "SmallAutoField",
        "BigIntegerField",
        "IntegerField",
        "PositiveBigIntegerField",
        "PositiveIntegerField",
        "PositiveSmallIntegerField",
        "SmallIntegerField",
        "FloatField",
        "CharField",
        "TextField",
        "SlugField",
        "ForeignKey",
        "OneToOneField",
        "BooleanField",
    }
)


def insert_rows(model, fields: Sequence[str], rows: Iterable[Sequence], using: str | None = None) -> int:
    """Insert ``rows`` (tuples of values for the attnames ``fields``, e.g. ``workload_id``) into
    ``model``'s table; returns the number of rows. Primary keys come from the database."""
    using = using or router.db_for_write(model)
    connection = connections[using]
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    unknown = [name for name in fields if name not in by_attname]
    if unknown:
        raise ValueError(f"{model.__name__} has no column {', '.join(unknown)}")
    given = [by_attname[name] for name in fields]
    now = timezone.now()
    rest, constants = [], []
    for f in model._meta.concrete_fields:
        if f.attname in fields or f.primary_key:
            continue
        value = now if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False) else f.get_default()
        rest.append(f)
        constants.append(f.get_db_prep_save(value, connection))
    prep = [None if f.get_internal_type() in _PLAIN else f for f in given]
    needs_prep = any(p is not None for p in prep)
    constants = tuple(constants)

    def full_rows():
        for row in rows:
            if needs_prep:
                row = tuple(v if p is None else p.get_db_prep_save(v, connection) for v, p in zip(row, prep))
            yield tuple(row) + constants

    columns = [f.column for f in given + rest]
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    cols = ", ".join(qn(c) for c in columns)
    n = 0
    connection.ensure_connection()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            raw = cursor.cursor  # the psycopg cursor: COPY is not in the DB-API
            with connection.wrap_database_errors:
                with raw.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                    for row in full_rows():
                        copy.write_row(row)
                        n += 1
        else:
            sql = f"INSERT INTO {table} ({cols}) VALUES ({', '.join(['%s'] * len(columns))})"
            batch: list[tuple] = []
            for row in full_rows():
                batch.append(row)
                if len(batch) >= 2000:
                    cursor.executemany(sql, batch)
                    n += len(batch)
                    batch = []
            if batch:
                cursor.executemany(sql, batch)
                n += len(batch)
    return n
