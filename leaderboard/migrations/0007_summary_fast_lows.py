"""Every summary's workloads' lows in one blob (jaxbench.metrics.fast_lows): a board at p != 1
reads one row per summary instead of every workload's JSON aggregate. Filled here from the
stored aggregates; self-contained: the layout as it was when this migration was written,
whatever the code does later. A summary left empty is read through its aggregates, as before."""

import array
import struct
import sys

from django.db import migrations, models


def _ints(values):
    out = array.array("i", values)
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


def pack(entries, independent):
    """entries: [(workload pk, aggregate dict)] -> the fast_lows layout."""
    entries = sorted(entries, key=lambda e: e[0])
    lows, indices, cols = array.array("d"), array.array("d"), [[], [], [], [], []]
    for pk, agg in entries:
        cols[0].append(pk)
        cols[1].append(int(agg.get("n_samples") or 0))
        cols[2].append(int(agg.get("n_correct") or 0))
        cols[3].append(-1 if agg.get("max_index") is None else int(agg["max_index"]))
        cols[4].append(len(lows))
        # aggregates stored before intervals: every low is its point (WorkloadAggregate.from_dict)
        if independent:
            lows.extend(float(x) for x in (agg["correct_lows"] if "correct_lows" in agg else agg.get("correct_speedups")) or ())
        else:
            for i, low in (agg["low_progression"] if "low_progression" in agg else agg.get("progression")) or ():
                indices.append(int(i))
                lows.append(float(low))
    if sys.byteorder != "little":
        lows.byteswap()
        indices.byteswap()
    head = struct.pack("<I", len(entries)) + b"".join(_ints(c) for c in cols)
    return head + struct.pack("<i", len(lows)) + lows.tobytes() + indices.tobytes()


def forwards(apps, schema_editor):
    Summary = apps.get_model("leaderboard", "SubmissionSummary")
    Result = apps.get_model("leaderboard", "WorkloadResult")
    modes = dict(Summary.objects.order_by("pk").values_list("pk", "mode"))
    pks = list(modes)
    chunk = 20  # summaries at a time: their aggregates in memory, never one open cursor
    for i in range(0, len(pks), chunk):
        part = pks[i : i + chunk]
        entries = {pk: [] for pk in part}
        for sid, wl, agg in Result.objects.filter(summary_id__in=part).values_list("summary_id", "workload_id", "aggregate"):
            entries[sid].append((wl, agg or {}))
        batch = [Summary(pk=pk, fast_lows=pack(entries[pk], modes[pk] == "independent")) for pk in part]
        Summary.objects.bulk_update(batch, ["fast_lows"])


class Migration(migrations.Migration):
    dependencies = [("leaderboard", "0006_summary_attempted")]

    operations = [
        migrations.AddField(model_name="submissionsummary", name="fast_lows", field=models.BinaryField(default=b"")),
        # backwards drops the column: nothing else reads it
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
