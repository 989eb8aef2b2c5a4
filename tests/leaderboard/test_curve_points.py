"""The database cuts the record at a budget out of a summary's packed curves
(leaderboard/curve_points.py): the same bytes as its Python twin ``curves.point_of``. Marked
``integration`` so that it also runs against PostgreSQL (SUBSTRING over bytea), not only SQLite."""

from __future__ import annotations

import random

import pytest

from jaxbench.metrics.curves import CURVE_KEYS, pack_curves, point_of
from leaderboard.curve_points import curve_point
from leaderboard.models import SubmissionSummary
from tests.leaderboard.conftest import make_submission, make_team

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_the_database_cuts_the_same_record_as_python(workloads, hardware, users):
    team = make_team("Curve Lab", users["alice"])
    rng = random.Random(4)
    lengths = [0, 1, 2, 5, 144]
    pks = []
    for length in lengths:
        sub = make_submission(team, hardware["cpu"], {}, evaluate=False)
        curves = {k: [rng.uniform(-1, 3) for _ in range(length)] for k in CURVE_KEYS}
        s = SubmissionSummary.objects.create(
            submission=sub, hardware=hardware["cpu"], curves_all=pack_curves(curves), curves_expert=b""
        )
        pks.append(s.pk)
    for n in (None, 0, 1, 2, 4, 5, 6, 143, 144, 500):
        got = {
            r["pk"]: bytes(r["p"] or b"")
            for r in SubmissionSummary.objects.filter(pk__in=pks).values("pk", p=curve_point("curves_all", n))
        }
        empty = {
            r["pk"]: bytes(r["e"] or b"")
            for r in SubmissionSummary.objects.filter(pk__in=pks).values("pk", e=curve_point("curves_expert", n))
        }
        for pk in pks:
            blob = bytes(SubmissionSummary.objects.get(pk=pk).curves_all)
            assert got[pk] == point_of(blob, n), (pk, n)
            assert empty[pk] == b""


def _legacy(curves: dict[str, list[float]], keys=CURVE_KEYS) -> bytes:
    """The layout before leaderboard 0005: one array per key, N ascending."""
    import array
    import struct

    n = len(curves[keys[0]])
    return struct.pack("<I", n) + array.array("d", [v for k in keys for v in curves[k]]).tobytes()


@pytest.mark.django_db(transaction=True)
def test_migration_repacks_the_curves_stored_before(workloads, hardware, users):
    import math

    from jaxbench.metrics.curves import unpack_curves
    from leaderboard.models import WorkloadResult
    from tests import factories

    team = make_team("Old Lab", users["alice"])
    sub = make_submission(team, hardware["cpu"], {}, evaluate=False)
    rng = random.Random(8)
    full = {k: [rng.uniform(-1, 3) for _ in range(7)] for k in CURVE_KEYS}
    five = {k: full[k] for k in CURVE_KEYS[:5]}  # packed before the unfloored curves
    made = {}

    def rows(apps):
        summary = apps.get_model("leaderboard", "SubmissionSummary").objects.create(
            submission_id=sub.pk,
            hardware_id=hardware["cpu"].pk,
            curves_all=_legacy(full),
            curves_expert=_legacy(five, CURVE_KEYS[:5]),
            curves_production=b"",
        )
        made["summary"] = summary.pk
        made["result"] = (
            apps.get_model("leaderboard", "WorkloadResult")
            .objects.create(
                summary_id=summary.pk,
                submission_id=sub.pk,
                workload_id=workloads[0].pk,
                hardware_id=hardware["cpu"].pk,
                curves=_legacy(full),
            )
            .pk
        )

    factories.stored_before(("leaderboard", "0004_summary_earlier_harness_versions"), rows)
    s = SubmissionSummary.objects.get(pk=made["summary"])
    r = WorkloadResult.objects.get(pk=made["result"])
    for blob in (s.curves_all, r.curves):
        assert {k: list(v) for k, v in unpack_curves(blob).items()} == full
        assert bytes(blob) == pack_curves(full)  # the new layout
    expert = unpack_curves(s.curves_expert)
    assert [list(expert[k]) for k in CURVE_KEYS[:5]] == [full[k] for k in CURVE_KEYS[:5]]
    assert all(math.isnan(v) for k in CURVE_KEYS[5:] for v in expert[k])
    assert bytes(s.curves_production) == b""  # nothing stored stays nothing
    # and the board reads the record of the repacked blob
    got = SubmissionSummary.objects.filter(pk=s.pk).values_list(curve_point("curves_all", 3), flat=True)[0]
    assert bytes(got) == point_of(pack_curves(full), 3)
