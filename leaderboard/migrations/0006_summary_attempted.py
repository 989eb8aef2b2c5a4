"""Per workload set, the workloads a summary attempted (at least one evaluated kernel): what the
public suite's own score divides by. Filled from each summary's ``best`` (one key per workload
folded) and the catalog's set membership, with the sets as they were when this migration was
written (jaxbench.workloads.sets), whatever the code does later."""

from django.db import migrations, models

SETS = {  # name -> the attributes a member has
    "all": {"level": 1},
    "production": {"level": 1, "source": "maxtext"},
    "kernelbench": {"level": 1, "source": "kernelbench-l2"},
    "expert": {"level": 1, "expert": True},
    "level2": {"level": 2},
}


def forwards(apps, schema_editor):
    Workload = apps.get_model("catalog", "Workload")
    Summary = apps.get_model("leaderboard", "SubmissionSummary")
    members = {name: set() for name in SETS}
    for wid, source, expert, level in Workload.objects.values_list("wid", "source", "expert", "level"):
        attrs = {"source": source, "expert": bool(expert), "level": level}
        for name, flt in SETS.items():
            if all(attrs[k] == v for k, v in flt.items()):
                members[name].add(wid)
    batch = []
    for s in Summary.objects.only("pk", "best").iterator(chunk_size=500):
        wids = set(s.best or {})
        for name in SETS:
            setattr(s, f"attempted_{name}", len(wids & members[name]))
        batch.append(s)
        if len(batch) >= 500:
            Summary.objects.bulk_update(batch, [f"attempted_{n}" for n in SETS])
            batch = []
    if batch:
        Summary.objects.bulk_update(batch, [f"attempted_{n}" for n in SETS])


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0005_curves_one_record_per_budget"),
        ("catalog", "0005_workload_starter_source"),
    ]

    operations = [
        *(
            migrations.AddField(
                model_name="submissionsummary", name=f"attempted_{name}", field=models.PositiveIntegerField(default=0)
            )
            for name in SETS
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
