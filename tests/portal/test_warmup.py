"""A web worker's database connection, primed after the fork (``portal.warmup.warm_connections``
from gunicorn's ``post_worker_init``): one row-less query per table, on this process's own
connection, and nothing the request path would notice."""

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from portal import gunicorn_hooks
from portal.warmup import warm_connections


def _tables() -> set[str]:
    return {
        m._meta.db_table for m in apps.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy
    }


@pytest.mark.django_db(transaction=True)
def test_every_table_is_read_once_and_the_connection_stays_open():
    connection.close()
    with CaptureQueriesContext(connection) as got:
        warm_connections()
    assert connection.connection is not None  # opened here, kept for the first request
    read = [q["sql"] for q in got.captured_queries]
    assert len(read) == len(_tables())
    assert all(" LIMIT 1" in sql for sql in read)  # exists(): no rows fetched
    for table in _tables():
        assert any(f'"{table}"' in sql for sql in read), table


@pytest.mark.django_db(transaction=True)
def test_the_gunicorn_hook_primes_the_workers_connection():
    connection.close()
    with CaptureQueriesContext(connection) as got:
        gunicorn_hooks.post_worker_init(worker=None)
    assert len(got.captured_queries) == len(_tables())
