"""submissions.bulk.insert_rows stores what Model() + bulk_create would: the named columns as
given, every other column with its field's default."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from evaluator.models import Evaluation
from submissions.bulk import insert_rows
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

CODE = "def workload(x):\n    return x\n"


def test_named_columns_as_given_the_rest_as_model_defaults():
    sub = factories.submission([("12p", CODE), ("8p", CODE + "# ünïcode \t tab \\ backslash\n")])
    cands = list(sub.candidates.order_by("pk"))
    now = timezone.now()
    n = insert_rows(
        Evaluation,
        ("candidate_id", "hardware_id", "stage", "code_sha256", "enqueued_at"),
        [(c.pk, sub.hardware_id, Evaluation.MAIN, c.code_sha256, now) for c in cands],
    )
    assert n == 2
    rows = list(Evaluation.objects.filter(candidate__submission=sub).order_by("pk"))
    template = Evaluation(candidate=cands[0], hardware=sub.hardware, stage=Evaluation.MAIN)
    for row, c in zip(rows, cands):
        assert (row.candidate_id, row.stage, row.code_sha256, row.enqueued_at) == (
            c.pk,
            Evaluation.MAIN,
            c.code_sha256,
            now,
        )
        for f in Evaluation._meta.concrete_fields:
            if f.attname in ("id", "candidate_id", "code_sha256", "enqueued_at", "created_at"):
                continue
            assert getattr(row, f.attname) == getattr(template, f.attname), f.attname
        assert row.created_at is not None
    assert rows[1].candidate.code == cands[1].code


def test_a_constraint_violation_is_djangos_integrity_error():
    sub = factories.submission([("12p", CODE)])
    c = sub.candidates.get()
    row = (c.pk, sub.hardware_id, Evaluation.MAIN, c.code_sha256)
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            insert_rows(Evaluation, ("candidate_id", "hardware_id", "stage", "code_sha256"), [row, row])
    assert not Evaluation.objects.filter(candidate=c).exists()


def test_unknown_columns_are_refused():
    with pytest.raises(ValueError, match="no column nope"):
        insert_rows(Evaluation, ("nope",), [])
