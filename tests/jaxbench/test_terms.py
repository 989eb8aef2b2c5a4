"""One definition per term: workload names, workload sets, outcomes, the speedup format."""

import json

import pytest

from jaxbench import record, workloads
from jaxbench.record import Outcome, format_interval, format_speedup
from jaxbench.traces import WorkloadCatalog
from jaxbench.workloads import names, sets


@pytest.mark.parametrize(
    "name", ["12p", "012p", "12P", "12p-rmsnorm", "12p_RMSNorm", "12p_RMSNorm.py", " 12p-rmsnorm.py "]
)
def test_every_name_of_a_workload_resolves_to_its_id(name):
    entries = {w.id: (w.slug, w.public_name) for w in workloads.all_workloads()}
    assert names.resolve(name, entries) == "12p"
    assert workloads.get(name).id == "12p"
    assert WorkloadCatalog((w, s, p) for w, (s, p) in entries.items()).resolve(name) == "12p"


@pytest.mark.parametrize("name", ["99p", "12k", "12p-gemm", "rmsnorm", "", "p12", "12p_RMSNorm_v2"])
def test_names_that_are_no_workload_resolve_to_nothing(name):
    entries = {w.id: (w.slug, w.public_name) for w in workloads.all_workloads()}
    assert names.resolve(name, entries) is None
    with pytest.raises(KeyError, match="use an ID such as 12p"):
        workloads.get(name)


def test_offline_resolution_checks_the_suites_numbering():
    assert [names.resolve(n, None) for n in ("1p", "17p", "18k", "50k")] == ["1p", "17p", "18k", "50k"]
    assert [names.resolve(n, None) for n in ("18p", "17k", "51k", "0p", "50d")] == [None] * 5
    # later levels number on from 51, the letter naming their source
    assert [names.resolve(n, None) for n in ("51d", "051d", "120d-some-name")] == ["51d", "51d", "120d"]


def test_the_sets_hold_the_published_sizes_and_say_them_in_their_labels():
    members = [(w.source, w.expert, w.level) for w in workloads.all_workloads()]
    sizes = sets.sizes(members)
    assert sizes == {"all": 50, "production": 17, "kernelbench": 33, "expert": 8, "level2": 8}
    for s in sets.SETS:
        if s.level == 1:  # level 1 is fixed at the public suite's 50; later levels grow
            assert s.label.endswith(f" {sizes[s.name]}"), s
    assert sets.sets_of("maxtext", True) == ("all", "production", "expert")
    assert sets.sets_of("kernelbench-l2", False) == ("all", "kernelbench")
    # a later level is ranked apart: its workloads are in none of level 1's sets
    assert sets.sets_of("deepseek-v4", True, 2) == ("level2",)
    assert sets.sets_of("maxtext", False, 2) == ("level2",)


def test_outcomes_are_one_enum_of_plain_strings():
    assert record.OUTCOMES == tuple(Outcome)
    assert set(record.CORRECT_OUTCOMES) == {o for o in Outcome if o.startswith("correct_")}
    assert json.dumps([Outcome.CORRECT_FASTER]) == '["correct_faster"]'
    assert f"{Outcome.TIMEOUT}" == "timeout" and Outcome.TIMEOUT == "timeout"
    assert set(record.OUTCOME_LABELS) == set(Outcome) and set(record.CATEGORIES) <= set(Outcome)


def test_the_speedup_and_interval_format():
    assert format_speedup(1.4221, 1.371, 1.48) == "1.42x [1.37, 1.48]"
    assert format_speedup(1.4221) == "1.42x" and format_speedup(None) == "-"
    assert format_interval(0.5, 2e9) == "[0.50, ∞]"
