"""The public suite file each workload matches, its deviations and the null-kernel audit
(written by sync_registry)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0003_level_configurations"),
    ]

    operations = [
        migrations.AddField(
            model_name="workload",
            name="upstream",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="workload",
            name="deviations",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="workload",
            name="null_audit",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
