"""Repack every stored curve into the one-record-per-budget layout (jaxbench.metrics.curves:
a board now reads the record at its budget in SQL). Self-contained: the layouts as they were
when this migration was written, whatever the code does later."""

import array
import math
import struct
import sys

from django.db import migrations

KEYS = 8  # log, lo, hi, solved, fast, ulog, ulo, uhi
OLD_KEYS = 5  # before the unfloored curves: those become NaN (unknown until a rebuild)
ROWS = 0x80000000
SUMMARY_FIELDS = ("curves_all", "curves_production", "curves_kernelbench", "curves_expert", "curves_level2")


def repack(blob):
    data = bytes(blob or b"")
    if len(data) < 4:
        return data  # no curve stored (the model's default): read as empty either way
    (header,) = struct.unpack_from("<I", data)
    if header & ROWS:
        return data
    n = header
    arr = array.array("d")
    arr.frombytes(data[4 : 4 + 8 * n * KEYS])
    if sys.byteorder != "little":
        arr.byteswap()
    if len(arr) == n * OLD_KEYS:
        arr.extend([math.nan] * (n * (KEYS - OLD_KEYS)))
    out = array.array("d", bytes(8 * KEYS * n))
    for i in range(KEYS):
        col = arr[i * n : (i + 1) * n]
        col.reverse()
        out[i::KEYS] = col
    if sys.byteorder != "little":
        out.byteswap()
    return struct.pack("<I", n | ROWS) + out.tobytes()


def _repack_model(model, fields, chunk=500):
    # by chunks of primary keys, not one open cursor: SQLite must not update the rows it reads
    pks = list(model.objects.order_by("pk").values_list("pk", flat=True))
    for i in range(0, len(pks), chunk):
        batch = []
        for row in model.objects.filter(pk__in=pks[i : i + chunk]).only("pk", *fields):
            new = {f: repack(getattr(row, f)) for f in fields}
            if any(new[f] != bytes(getattr(row, f) or b"") for f in fields):
                for f, value in new.items():
                    setattr(row, f, value)
                batch.append(row)
        if batch:
            model.objects.bulk_update(batch, fields)


def forwards(apps, schema_editor):
    _repack_model(apps.get_model("leaderboard", "SubmissionSummary"), SUMMARY_FIELDS)
    _repack_model(apps.get_model("leaderboard", "WorkloadResult"), ("curves",))


class Migration(migrations.Migration):
    dependencies = [("leaderboard", "0004_summary_earlier_harness_versions")]

    # backwards leaves the blobs as they are: the earlier code cannot read this layout, so
    # going back needs ``manage.py rebuild_aggregates`` (it repacks from the evaluations)
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
