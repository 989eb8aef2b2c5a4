"""The fraction of the hardware's limit (issue 32, item 3): the pure roofline figures
(``jaxbench.metrics.roofline``), the one table of peaks (``jaxbench.hardware.PEAKS``, TPU rows
checked against JAX's own TPU info), and the review hold above 100% (``verdict.review``) as the
speed verdict applies it, on hand-made values and the honest kernels' measured times."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from jaxbench import hardware, workloads
from jaxbench.harness.speed import speed_verdict
from jaxbench.metrics import roofline
from jaxbench.record import new_record
from jaxbench.verdict import configurations as cfgs
from jaxbench.verdict import rules
from jaxbench.verdict.review import LIMIT_REVIEW_FRACTION, hold_reasons

RECORDS = Path(__file__).parent / "records"
H200 = hardware.peaks_of("gpu-h200")


# ------------------------------------------------------------------ the pure figures


def test_the_roofline_time_is_the_larger_of_compute_and_memory_time():
    peaks = hardware.Peaks(1e12, 1e11, "test sheet")
    memory = roofline.of_peaks(1e9, 1e9, peaks)  # 1 ms of FLOPs, 10 ms of bytes
    assert memory is not None and memory.time_s == pytest.approx(1e-2) and memory.bound == "memory"
    compute = roofline.of_peaks(1e10, 1e8, peaks)  # 10 ms of FLOPs, 1 ms of bytes
    assert compute is not None and compute.time_s == pytest.approx(1e-2) and compute.bound == "compute"
    assert roofline.roofline_time(1e10, 1e8, 1e12, 1e11) == pytest.approx(1e-2)


def test_the_fraction_of_the_limit_is_roofline_time_over_measured_time():
    peaks = hardware.Peaks(1e12, 1e11, "test sheet")
    assert roofline.fraction_of_limit(1e9, 1e9, 0.04, peaks) == pytest.approx(0.25)
    assert roofline.fraction_of_limit(1e9, 1e9, 0.01, peaks) == pytest.approx(1.0)
    assert roofline.fraction_of_limit(1e9, 1e9, 0.005, peaks) == pytest.approx(2.0)
    # 12p at the small profile on an H200: 1,049,600 bytes over 4.8 TB/s = 218.7 ns; 1.4 us measured
    flops, nbytes = workloads.get("12p").cost("small")
    assert (flops, nbytes) == (1310720, 1049600)
    assert roofline.fraction_of_limit(flops, nbytes, 1.4e-6, H200) == pytest.approx(1049600 / 4.8e12 / 1.4e-6)


def test_unknown_peaks_cost_or_time_give_no_figure():
    peaks = hardware.Peaks(1e12, 1e11, "test sheet")
    assert roofline.fraction_of_limit(1e9, 1e9, 0.01, None) is None  # peaks unknown
    assert roofline.fraction_of_limit(1e9, 1e9, 0.01, hardware.Peaks(0.0, 1e11, "")) is None
    assert roofline.fraction_of_limit(0, 0, 0.01, peaks) is None  # no work: no limit to reach
    assert roofline.fraction_of_limit(-1, 1e9, 0.01, peaks) is None
    for t in (None, 0.0, -1.0, math.nan, math.inf, "0.01", True):
        assert roofline.fraction_of_limit(1e9, 1e9, t, peaks) is None
    assert roofline.label(None, 0.01) is None
    assert roofline.Roofline.from_dict(None) is None and roofline.Roofline.from_dict({"flops": 1}) is None


def test_the_cpu_target_has_no_peaks_so_no_figure_is_invented():
    assert hardware.peaks_of("cpu") is None
    assert roofline.of_case({"small": {"flops": 10**9, "bytes": 10**9}}, "small", "cpu") is None
    # the floor gate keeps its rough bound there, apart from any peak
    assert (hardware.TARGETS["cpu"].peak_flops, hardware.TARGETS["cpu"].peak_bandwidth) == hardware.CPU_FLOOR_RATES


def test_a_case_reads_the_catalogue_costs_of_that_case():
    costs = {"small/a": {"flops": 4.8e12, "bytes": 0}, "full": {"flops": 1, "bytes": 4.8e12}}
    assert roofline.of_case(costs, "small/a", "gpu-h200").time_s == pytest.approx(4.8e12 / 989.5e12)
    assert roofline.of_case(costs, "full", "gpu-h200").time_s == pytest.approx(1.0)
    assert roofline.of_case(costs, "small", "gpu-h200") is None  # a bare profile of a multi-configuration one
    assert roofline.of_case(costs, "full", "gpu-unknown") is None
    assert roofline.of_case(None, "full", "gpu-h200") is None


def test_the_label_names_the_figure_the_peaks_and_their_source():
    r = roofline.of_peaks(1310720, 1049600, H200)
    lab = roofline.label(r, 1.4e-6)
    assert lab is not None and lab["text"] == "16% of limit" and lab["fraction"] == pytest.approx(0.1562, abs=1e-4)
    assert "219 ns (memory-bound)" in lab["title"] and "989.5 TFLOP/s" in lab["title"] and "4.8 TB/s" in lab["title"]
    assert "nvidia.com" in lab["title"]
    assert [roofline.percent(f) for f in (0.0004, 0.032, 0.156, 0.996, 1.004, 2.5)] == [
        "<0.1%",
        "3.2%",
        "16%",
        "99.6%",
        "100.4%",
        "250.0%",
    ]


def test_the_record_keeps_the_roofline_it_was_judged_on():
    r = roofline.of_peaks(10**9, 10**8, H200)
    assert r is not None and roofline.Roofline.from_dict(json.loads(json.dumps(r.as_dict()))) == r


# ------------------------------------------------------------------ the one table of peaks


def test_tpu_peaks_are_jaxs_own_tpu_info():
    """The TPU rows are JAX's figures (per TensorCore, times the cores of one device), copied so
    the portal never imports JAX: they must equal what the installed JAX says."""
    from jax.experimental.pallas import tpu as pltpu

    assert set(hardware.TPU_CHIPS) == {slug for slug in hardware.PEAKS if slug.startswith("tpu-")}
    for slug, (chip, cores) in hardware.TPU_CHIPS.items():
        info = pltpu.get_tpu_info_for_chip(pltpu.ChipVersion(chip), cores)
        p = hardware.peaks_of(slug)
        assert p is not None and "get_tpu_info_for_chip" in p.source, slug
        assert p.flops == pytest.approx(info.bf16_ops_per_second * info.num_cores, rel=1e-9), slug
        assert p.bandwidth == pytest.approx(info.mem_bw_bytes_per_second * info.num_cores, rel=1e-9), slug
        assert (hardware.TARGETS[slug].peak_flops, hardware.TARGETS[slug].peak_bandwidth) == (p.flops, p.bandwidth)


def test_every_peak_has_a_source_and_gpu_names_map_to_their_rows():
    for slug, p in hardware.PEAKS.items():
        assert p.flops > 0 and p.bandwidth > 0 and "https://" in p.source, slug
    for kind, slug in (
        ("NVIDIA H200", "gpu-h200"),
        ("NVIDIA H100 80GB HBM3", "gpu-h100"),
        ("NVIDIA H100 NVL", "gpu-h100"),
        ("NVIDIA A100-SXM4-80GB", "gpu-a100"),
        ("NVIDIA L4", "gpu-l4"),
    ):
        assert hardware.slug_for_device_kind("gpu", kind) == slug and hardware.peaks_of(slug) is not None
    # one name, several boards: the highest figure of each (H100 SXM's FLOP/s, H100 NVL's bandwidth)
    assert (hardware.PEAKS["gpu-h100"].flops, hardware.PEAKS["gpu-h100"].bandwidth) == (989.5e12, 3.9e12)


# ------------------------------------------------------------------ the hold above 100%

PEAKS = hardware.Peaks(1e12, 1e11, "test sheet")
LIMIT = roofline.of_peaks(1e9, 1e9, PEAKS).as_dict()  # 10 ms


def test_a_median_above_the_limit_is_held_with_its_figures():
    (reason,) = hold_reasons("correct_faster", 1.5, [1.4, 1.6], None, roofline=LIMIT, median_s=0.0099)
    assert "held for review" in reason and "101.0% of the hardware's limit" in reason
    assert "9.9 ms" in reason and "limit 10 ms (memory-bound)" in reason and "test sheet" in reason


def test_at_or_below_the_limit_nothing_is_held():
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], None, roofline=LIMIT, median_s=0.0101) == []  # 99%
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], None, roofline=LIMIT, median_s=0.01) == []  # at it
    assert LIMIT_REVIEW_FRACTION == 1.0
    # no roofline (peaks unknown: cpu), no time, a failure: nothing held for this
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], None, roofline=None, median_s=1e-9) == []
    assert hold_reasons("correct_faster", 1.5, [1.4, 1.6], None, roofline=LIMIT, median_s=None) == []
    assert hold_reasons("incorrect", None, None, None, roofline=LIMIT, median_s=1e-9) == []


def test_between_the_floor_and_the_roofline_is_held_below_the_floor_rejected():
    """One roofline, two bars: the plausibility gate rejects a median below roofline x slack as
    impossible; the review holds one between that floor and the roofline."""
    flops, nbytes = 1e9, 1e9
    floor = rules.physical_floor(flops, nbytes, PEAKS.flops, PEAKS.bandwidth, "gpu")
    assert floor == pytest.approx(0.5 * LIMIT["time_s"])
    between = 0.7 * LIMIT["time_s"]
    assert rules.plausibility([between] * 50, None, 10.0, None, floor) is None
    assert hold_reasons("correct_faster", 2.0, [1.9, 2.1], None, roofline=LIMIT, median_s=between)
    below = 0.4 * LIMIT["time_s"]
    assert "below the physical floor" in (rules.plausibility([below] * 50, None, 10.0, None, floor) or "")


def _speed(cand_s, *, limit, platform="gpu"):
    base, cand = [2 * cand_s] * 50, [cand_s] * 50
    rec = new_record(
        platform=platform,
        require_pallas=False,
        roofline=limit,
        timing={"median_s": cand_s, "samples": cand},
        baseline_timing={"median_s": base[0], "samples": base},
    )

    def remeasure():  # pragma: no cover - the guard trusts an identical baseline
        raise AssertionError("the guard should not trip")

    speed_verdict(rec, None, {"median_s": base[0], "timing": {"samples": base}}, remeasure)
    return rec


def test_the_speed_verdict_holds_a_median_faster_than_the_roofline():
    rec = _speed(0.009, limit=LIMIT)  # 111% of the limit
    assert rec["outcome"] == "correct_faster" and rec["held_for_review"] is True
    assert any("111.1% of the hardware's limit" in n for n in rec["notes"])
    rec = _speed(0.0101, limit=LIMIT)  # 99%
    assert rec["held_for_review"] is False and rec["notes"] == []
    rec = _speed(0.009, limit=None)  # no sourced peaks: no hold for this
    assert rec["held_for_review"] is False


def test_a_configuration_above_its_limit_holds_the_workload_and_keeps_its_roofline():
    held, fine = _speed(0.009, limit=LIMIT), _speed(0.02, limit=LIMIT)
    out = cfgs.combine("small", [("a", "small/a", held), ("b", "small/b", fine)])
    assert out["held_for_review"] is True and any(n.startswith("a: the median") for n in out["notes"])
    assert out["roofline"] is None and [c["roofline"] for c in out["configurations"]] == [LIMIT, LIMIT]


# ------------------------------------------------------------------ honest kernels are not held


def test_the_honest_kernels_records_are_not_held():
    """The honest 12p kernel's real record (cpu, small): the cpu target has no peaks, so no
    roofline and no hold; and even the floor gate's rough cpu rates would put it far below."""
    rec = json.loads((RECORDS / "correct_12p_small_cpu.json").read_text())
    assert rec["outcome"] in ("correct_faster", "correct_tie", "correct_slower")
    assert (
        roofline.of_case(
            {"small": dict(zip(("flops", "bytes"), workloads.get("12p").cost("small")))}, "small", rec["hardware"]
        )
        is None
    )
    assert (
        hold_reasons(
            rec["outcome"],
            rec["speedup"],
            rec["speedup_ci"],
            rec["pallas_share"],
            roofline=rec.get("roofline"),
            median_s=rec["timing"]["median_s"],
        )
        == []
    )
    rough = roofline.roofline(*workloads.get("12p").cost("small"), *hardware.CPU_FLOOR_RATES, "floor rates")
    assert rough is not None and rough.fraction(rec["timing"]["median_s"]) < 0.2
    assert rough.fraction(rec["baseline_median_s"]) < 0.2


@pytest.mark.parametrize(
    "wid, kernel_s, xla_s",
    [("12p", 1.4e-6, 1.4e-6), ("8p", 5.3e-6, 3.8e-6), ("1p", 17.0e-6, 29.6e-6)],
)
def test_the_honest_gpu_examples_measured_on_an_h200_stay_far_below_the_limit(wid, kernel_s, xla_s):
    """docs/DESIGN.md's H200 table (small profile): kernel and XLA times of the Triton examples;
    the fastest of them reaches a quarter of the limit."""
    flops, nbytes = workloads.get(wid).cost("small")
    for t in (kernel_s, xla_s):
        f = roofline.fraction_of_limit(flops, nbytes, t, H200)
        assert f is not None and f < 0.3
    limit = roofline.of_peaks(flops, nbytes, H200).as_dict()
    assert hold_reasons("correct_faster", 1.8, [1.7, 1.9], None, roofline=limit, median_s=kernel_s) == []
