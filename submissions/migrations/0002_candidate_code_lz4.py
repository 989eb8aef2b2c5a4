"""PostgreSQL: compress the candidates' code with lz4 instead of pglz (issue 13).

A 7,200-sample trace stores ~28 MB of ~4 KB sources; each is above the TOAST threshold and is
compressed on insert. lz4 compresses several times faster than the default pglz for a similar
ratio on source text. Only where the server has lz4 (PostgreSQL 14+ built with it); elsewhere,
and on SQLite, nothing changes. Existing rows keep their compression until rewritten.
"""
from django.db import migrations

FORWARD = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'
               AND 'lz4' = ANY(enumvals)) THEN
        EXECUTE 'ALTER TABLE submissions_candidate ALTER COLUMN code SET COMPRESSION lz4';
    END IF;
END $$;
"""
BACKWARD = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression') THEN
        EXECUTE 'ALTER TABLE submissions_candidate ALTER COLUMN code SET COMPRESSION default';
    END IF;
END $$;
"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("submissions", "0001_initial")]
    operations = [migrations.RunPython(forward, backward, elidable=False)]
