"""The starter file of each workload, built by sync_registry (served without importing JAX)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0004_upstream"),
    ]

    operations = [
        migrations.AddField(
            model_name="workload",
            name="starter_source",
            field=models.TextField(blank=True),
        ),
    ]
