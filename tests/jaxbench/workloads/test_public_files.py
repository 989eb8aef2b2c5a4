"""The public suite's own baseline.py files, uploaded unchanged as candidates, come back correct
through the real harness at the small profile (rule "pallas required" off, CPU), except where
the public file is broken in the public harness itself: those get the documented outcome, and
their workload carries a ``public_file_note`` (shown on the workload page and on /docs/) that
says what to change; the changed file must then be correct.

The run needs a copy of the public suite (``JAXBENCH_PUBLIC_SUITE``, see public_suite.py) and
is skipped without it; the registry checks below run everywhere."""

import pytest

from benchmarks.level2_public import SMALL_TUNED, candidate_source
from jaxbench import workloads
from jaxbench.workloads import upstream
from tests.jaxbench.workloads.public_suite import ENV, public_root

# Public files broken in their own harness: the outcome they get here unchanged, and the
# change their workload's public_file_note describes, as (old, new) text replacements.
BROKEN = {
    "11p": (
        "compile_error",
        [
            (
                "def workload(lhs, rhs, group_sizes, max_expert_size):\n",
                "def workload(lhs, rhs, group_sizes):\n    max_expert_size = CONFIG['max_expert_size']\n",
            )
        ],
    ),
}

IDS = workloads.ids()


def test_every_pallas_baseline_has_its_small_blocks():
    assert set(SMALL_TUNED) == {w.id for w in workloads.all_workloads() if w.pallas_baseline is not None}


def test_public_file_notes_are_exactly_the_broken_files():
    noted = {w.id for w in workloads.all_workloads() if w.public_file_note}
    assert noted == set(BROKEN)
    for wid, (outcome, changes) in BROKEN.items():
        note = workloads.get(wid).public_file_note
        assert outcome in note
        for _, new in changes:  # the note shows the change the test applies
            for line in new.strip().splitlines():
                assert line.strip().rstrip(":") in note.replace("`", ""), line


def test_public_file_note_reaches_the_registry_mirror():
    from catalog.registry_sync import workload_fields

    assert workload_fields(workloads.get("11p"))["public_file_note"] == workloads.get("11p").public_file_note
    assert workload_fields(workloads.get("12p"))["public_file_note"] == ""
    assert workloads.get("11p").summary()["public_file_note"]


def _public_source(wl) -> str:
    root = public_root()
    if root is None:
        pytest.skip(f"public suite not available: set {ENV} to its JAXBench/ folder")
    path = root / "benchmark" / upstream.suite_folder(wl.public_name, wl.level) / "baseline.py"
    assert path.is_file(), f"public suite has no {path}"
    source = path.read_text(encoding="utf-8")
    if wl.id in SMALL_TUNED and SMALL_TUNED[wl.id] is None:
        pytest.skip(f"{wl.id}: the public file reads the TPU's own figures when it traces; checked on a TPU")
    # level 2's files carry blocks tuned for the full shapes: at the small profile each runs with the
    # clamped values its Pallas baseline takes there (one appended line; the file's own unchanged)
    return candidate_source(source, SMALL_TUNED[wl.id]) if wl.id in SMALL_TUNED else source


def _evaluate(wid, source):
    from jaxbench import harness

    return harness.evaluate(wid, source, profile="small", hardware="cpu", require_pallas=False)


def _describe(rec) -> str:
    return f"{rec['outcome']} ({rec.get('error_category')}): {rec.get('message')}"


@pytest.mark.slow
@pytest.mark.parametrize("wid", IDS)
def test_public_baseline_runs_unchanged(wid):
    from jaxbench.record import CORRECT_OUTCOMES

    wl = workloads.get(wid)
    if "cpu" not in wl.platforms:
        pytest.skip(f"{wid} is measured on {', '.join(wl.platforms)} only: {wl.platform_note}")
    source = _public_source(wl)
    rec = _evaluate(wid, source)
    if wid not in BROKEN:
        assert rec["outcome"] in CORRECT_OUTCOMES, _describe(rec)
        return
    outcome, changes = BROKEN[wid]
    assert rec["outcome"] == outcome, _describe(rec)
    for old, new in changes:
        assert source.count(old) == 1, f"the public file changed: {old!r} not found once"
        source = source.replace(old, new)
    rec = _evaluate(wid, source)
    assert rec["outcome"] in CORRECT_OUTCOMES, "with the documented change: " + _describe(rec)
