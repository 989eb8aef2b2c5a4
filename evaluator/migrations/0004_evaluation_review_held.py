# Held means held (issue 21, item 5): the review state of an evaluation, back-filled from the
# stored records.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# the outcomes of a correct verdict at the time of this migration (jaxbench.record)
CORRECT = ("correct_slower", "correct_tie", "correct_faster")


def backfill(apps, schema_editor):
    """A stored correct verdict whose record says ``held_for_review`` starts held: until now it
    was ranked like any other, and from now on it waits for a staff review."""
    Evaluation = apps.get_model("evaluator", "Evaluation")
    Evaluation.objects.filter(record__held_for_review=True, outcome__in=CORRECT).update(review="held")


def unfill(apps, schema_editor):
    pass  # the columns go with the migration's reversal


class Migration(migrations.Migration):
    dependencies = [
        ("evaluator", "0003_evaluation_failures"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="evaluation",
            name="review",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "Not held"),
                    ("held", "Held for review"),
                    ("accepted", "Accepted on review"),
                    ("rejected", "Rejected on review"),
                ],
                default="",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="reviewed_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="reviewed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="review_note",
            field=models.TextField(blank=True),
        ),
        migrations.AddIndex(
            model_name="evaluation",
            index=models.Index(condition=models.Q(("review", "held")), fields=["id"], name="evaluation_held_idx"),
        ),
        migrations.AddIndex(
            model_name="evaluation",
            index=models.Index(
                condition=models.Q(("reviewed_at__isnull", False)), fields=["reviewed_at"], name="evaluation_reviewed_idx"
            ),
        ),
        migrations.RunPython(backfill, unfill),
    ]
