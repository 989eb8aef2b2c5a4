"""Busy neighbours of the timing core (sandbox/cores.py ``cache_neighbours``, harness/speed.py
``SHARED_SYSTEMATIC``): other work on cores that share the timer's caches or physical core slows
two programs unequally while the timing core itself looks free. The verdict's interval is widened
for it, so a loaded run is less decisive than a quiet one and never contradicts it; the review
bar never sees the widening. Hand-made values and a hand-made sysfs tree (no sandbox, no JAX)."""

from __future__ import annotations

import os

import pytest

from jaxbench.harness import speed
from jaxbench.harness.speed import shared_widening, speed_verdict
from jaxbench.record import new_record
from jaxbench.sandbox import cores
from jaxbench.sandbox.host import CoreTimes


def _sysfs(root, layout):
    """A sysfs cpu tree: ``layout`` maps a core to (thread siblings, [shared_cpu_list per cache
    index]); None for a core with no entries at all."""
    for core, entry in layout.items():
        base = root / f"cpu{core}"
        base.mkdir(parents=True)
        if entry is None:
            continue
        siblings, caches = entry
        (base / "topology").mkdir()
        (base / "topology" / "thread_siblings_list").write_text(siblings + "\n")
        for i, shared in enumerate(caches):
            (base / "cache" / f"index{i}").mkdir(parents=True)
            (base / "cache" / f"index{i}" / "shared_cpu_list").write_text(shared + "\n")


@pytest.fixture
def machine(monkeypatch):
    def set_machine(n, *, vm):
        monkeypatch.setattr(cores, "machine_cores", lambda: list(range(n)))
        monkeypatch.setattr(cores, "under_hypervisor", lambda: vm)

    return set_machine


def test_neighbours_are_the_cores_sharing_a_cache_or_a_physical_core(tmp_path, machine):
    machine(8, vm=False)
    # two sockets of 4 cores (L3 0-3 and 4-7), 2 and 3 hyperthreads of one core
    layout = {c: (str(c), [str(c), str(c), "0-3" if c < 4 else "4-7"]) for c in range(8)}
    layout[2] = ("2-3", ["2-3", "2-3", "0-3"])
    _sysfs(tmp_path, layout)
    assert cores.cache_neighbours([3], str(tmp_path)) == [0, 1, 2]
    assert cores.cache_neighbours([6], str(tmp_path)) == [4, 5, 7]
    assert cores.cache_neighbours([3, 6], str(tmp_path)) == [0, 1, 2, 4, 5, 7]


def test_a_core_sharing_nothing_has_no_neighbours_on_bare_metal_and_all_on_a_vm(tmp_path, machine):
    _sysfs(tmp_path, {c: (str(c), [str(c), str(c)]) for c in range(4)})
    machine(4, vm=False)
    assert cores.cache_neighbours([1], str(tmp_path)) == []
    # a guest cannot see which of its cores are hyperthreads of one physical core
    machine(4, vm=True)
    assert cores.cache_neighbours([1], str(tmp_path)) == [0, 2, 3]


def test_without_sysfs_every_other_core_is_a_neighbour(tmp_path, machine):
    machine(3, vm=False)
    _sysfs(tmp_path, {0: None, 1: None, 2: None})
    assert cores.cache_neighbours([2], str(tmp_path)) == [0, 1]
    assert cores.cache_neighbours([2], str(tmp_path / "missing")) == [0, 1]
    # a malformed list is no information either
    machine(2, vm=False)
    _sysfs(tmp_path / "bad", {0: ("zero", ["x-y"]), 1: None})
    assert cores.cache_neighbours([0], str(tmp_path / "bad")) == [1]


def test_this_machines_neighbours_are_other_cores_of_it():
    mine = cores.machine_cores()
    for core in mine:
        near = cores.cache_neighbours([core])
        assert core not in near and set(near) <= set(mine)


def test_contention_reads_the_neighbours_busy_time_in_cores_and_never_distrusts_for_it():
    hz = os.sysconf("SC_CLK_TCK")
    before = {0: CoreTimes(0, 0, 0), 1: CoreTimes(0, 0, 0), 2: CoreTimes(0, 0, 0)}
    after = {0: CoreTimes(10, 100, 0), 1: CoreTimes(100, 100, 0), 2: CoreTimes(60, 100, 0)}
    got = cores.contention(before, after, [0], 0.1 * 100 / hz, neighbours=[1, 2])
    assert got["neighbours"] == [1, 2] and got["neighbour_busy"] == pytest.approx(1.6)
    assert got["trusted"] and got["foreign"] == pytest.approx(0.0)
    # no neighbours named: nothing read
    got = cores.contention(before, after, [0], 0.1 * 100 / hz)
    assert got["neighbours"] == [] and got["neighbour_busy"] == 0.0


@pytest.mark.parametrize(
    ("platform", "neighbours", "want"),
    [
        ("cpu", None, 0.0),
        ("cpu", {"cores": [1], "busy": 0.0}, 0.0),
        ("cpu", {"cores": [1], "busy": speed.NEIGHBOUR_LIMIT}, 0.0),  # at the limit: quiet enough
        ("cpu", {"cores": [1], "busy": 0.9}, speed.SHARED_SYSTEMATIC["cpu"]),
        ("cpu", {"cores": [1], "busy": "lots"}, 0.0),  # not a figure: not one we measured
        ("tpu", {"cores": [1], "busy": 3.0}, 0.0),  # the device's own time: not widened
        ("gpu", {"cores": [1], "busy": 3.0}, 0.0),
    ],
)
def test_shared_widening(platform, neighbours, want):
    assert shared_widening(platform, neighbours) == want


def _verdict(ratios, busy, platform="cpu"):
    """A correct candidate timed at baseline/candidate ``ratios`` (one per pair, 1 ms baseline)
    with its timing core's neighbours ``busy`` cores busy in the busiest round."""
    base = [1e-3] * len(ratios)
    cand = [1e-3 / r for r in ratios]
    rec = new_record(
        platform=platform,
        require_pallas=True,
        pallas_share={"outside_share": 0.0, "threshold": 0.1, "ok": True, "kernels_unconditional": 1},
        timing={"median_s": sorted(cand)[len(cand) // 2], "samples": cand, "neighbours": {"cores": [1], "busy": busy}},
        baseline_timing={"median_s": base[0], "samples": base},
    )

    def remeasure():  # pragma: no cover - the guard trusts these baselines
        raise AssertionError("the guard should not trip")

    speed_verdict(rec, None, {"median_s": base[0], "timing": {"samples": base}}, remeasure)
    return rec


# 8p's example kernel beside a busy loop on the other core: 0.83x, quiet 0.98x (a tie)
SLOWED = [0.80, 0.86] * 25


def test_busy_neighbours_widen_a_label_they_may_have_caused_into_a_tie():
    quiet = _verdict(SLOWED, 0.1)
    assert quiet["outcome"] == "correct_slower" and not any("neighbours" in n for n in quiet["notes"])
    busy = _verdict(SLOWED, 1.0)
    assert busy["outcome"] == "correct_tie", busy["message"]
    assert busy["speedup"] == pytest.approx(quiet["speedup"])
    lo, hi = busy["speedup_ci"]
    assert lo < quiet["speedup_ci"][0] and hi > 1.0
    assert any("neighbours [1] were busy" in n and "20%" in n for n in busy["notes"])
    assert "interval widened 20% more" in busy["message"] and "widened" not in quiet["message"]


def test_a_real_twofold_difference_is_told_apart_beside_busy_neighbours():
    assert _verdict([2.0, 2.1] * 25, 1.0)["outcome"] == "correct_faster"
    assert _verdict([0.5, 0.48] * 25, 1.0)["outcome"] == "correct_slower"
    assert _verdict([1.0, 1.01] * 25, 1.0)["outcome"] == "correct_tie"


def test_the_review_bar_never_reads_the_neighbours_widening():
    # 9x with a tight interval: under the 10x bar quietly; the widened upper bound is above it
    busy = _verdict([9.0, 9.1] * 25, 1.0)
    assert busy["speedup_ci"][1] > 10.0 and busy["outcome"] == "correct_faster"
    assert busy["held_for_review"] is False, busy["notes"]


def test_an_accelerator_timing_is_never_widened_for_the_host():
    rec = _verdict(SLOWED, 3.0, platform="tpu")
    assert rec["outcome"] == "correct_slower" and not any("neighbours" in n for n in rec["notes"])


@pytest.mark.django_db
def test_the_docs_page_states_the_rule_with_its_figures(client):
    html = client.get("/docs/").content.decode()
    assert "never contradict it" in html
    assert f"a further {round(speed.SHARED_SYSTEMATIC['cpu'] * 100)}%" in html
    assert f"busier than {speed.NEIGHBOUR_LIMIT} of a core" in html
    # the guard's outcome as it is now: timed again, never held
    assert "held for review. A result" not in html and "never labelled or held for it" in html


def test_sysfs_is_read_once_per_core_and_process(tmp_path, machine):
    """Every timing round asks; the topology is read the first time only."""
    import shutil

    machine(4, vm=False)
    _sysfs(tmp_path / "t", {c: (str(c), [str(c), "0-1" if c < 2 else "2-3"]) for c in range(4)})
    assert cores.cache_neighbours([1], str(tmp_path / "t")) == [0]
    shutil.rmtree(tmp_path / "t")  # gone: a second read would find nothing and say every core
    assert cores.cache_neighbours([1], str(tmp_path / "t")) == [0]
    assert cores.cache_neighbours([3], str(tmp_path / "t")) == [0, 1, 2]  # never read: nothing known
