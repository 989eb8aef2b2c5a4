""" "x% of limit" beside each measured time (issue 32, item 3): the workload page (XLA alone, the
best sample's time and the XLA time beside it), the submission page's per-configuration tables
and the API's evaluations, each with the peaks and their source; nothing on a target without
sourced peaks (cpu), nothing for a time withheld while held. Results are stored through the
worker's own ``runner.finish``."""

from __future__ import annotations

import re
import types

import pytest
from django.test import Client

from catalog.models import Baseline, Workload
from jaxbench.record import HARNESS_VERSION, format_speedup, new_record
from jaxbench.verdict import configurations as cfgs
from tests.leaderboard.conftest import make_submission, make_team
from tests.leaderboard.test_held_review import client_for, finish

# workload 1p's full-profile cost in the test catalogue: 2e9 FLOPs, 4e6 bytes. On an H200
# (989.5 TFLOP/s bf16, 4.8 TB/s) compute binds: 2e9 / 989.5e12 = 2.0212 us.
LIMIT_S = 2e9 / 989.5e12
NBSP_OF_LIMIT = "\u00a0of\u00a0limit"


def timed_record(hardware, kernel_s, xla_s, *, profile="full", held=False):
    """A correct record as the harness writes it: the kernel's median beside XLA's."""
    speedup = xla_s / kernel_s
    lo, hi = 0.9 * speedup, 1.1 * speedup
    rec = new_record(
        outcome="correct_faster",
        phase="verdict",
        workload="1p",
        profile=profile,
        hardware=hardware,
        platform=hardware.split("-")[0],
        speedup=speedup,
        speedup_ci=[lo, hi],
        timing={"median_s": kernel_s, "samples": [kernel_s] * 3, "method": "device_kernel_span", "n": 3},
        baseline_timing={"median_s": xla_s, "samples": [xla_s] * 3},
        baseline_median_s=xla_s,
        baseline_source="interleaved",
        held_for_review=held,
        message=f"correct; {format_speedup(speedup, lo, hi)}, faster",
        jax_version="0.10.2",
        harness_version=HARNESS_VERSION,
    )
    if held:
        rec["notes"] = ["the median 1 us is 202.1% of the hardware's limit: held for review"]
    return rec


@pytest.fixture
def setup(workloads, hardware, users):
    team = make_team("Alpha Lab", users["alice"])
    w1 = workloads[0]
    subs = {}
    for slug in ("gpu-h200", "cpu"):
        subs[slug] = make_submission(
            team, hardware[slug], {w1: [("correct_faster", 2.0)]}, kind="kernels", evaluate=False
        )
    return types.SimpleNamespace(team=team, w1=w1, hw=hardware, subs=subs, users=users)


def _cell_texts(html: str, row_attr: str) -> list[str]:
    row = re.search(rf"<tr {row_attr}>(.*?)</tr>", html, re.S)
    assert row, row_attr
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)


def _limit(cell: str) -> str | None:
    m = re.search(r'<span class="of-limit muted small" title="([^"]*)">([^<]*)</span>', cell)
    return f"{m.group(2)}|{m.group(1)}" if m else None


def test_the_workload_page_shows_the_fraction_beside_each_time_on_a_target_with_peaks(setup):
    s = setup
    h200 = s.hw["gpu-h200"]
    Baseline.objects.create(
        workload=s.w1, hardware=h200, profile="full", jax_version="0.10.2", harness_version="1", median_s=8e-6
    )
    finish(s.subs["gpu-h200"], s.w1, timed_record("gpu-h200", 4e-6, 8e-6))
    finish(s.subs["cpu"], s.w1, timed_record("cpu", 4e-6, 8e-6, profile="small"))
    html = Client().get(f"/workloads/{s.w1.slug}/").content.decode()
    h200_html, cpu_html = (
        html[html.index('data-hardware="gpu-h200"') :].split("</section>")[0],
        html[html.index('data-hardware="cpu"') :].split("</section>")[0],
    )
    cells = _cell_texts(h200_html, f'data-submission="{s.subs["gpu-h200"].pk}"')
    time_cell, beside_cell = cells[7], cells[8]
    # the kernel's 4 us is 50.5% of the 2.02 us limit, the XLA time beside it 25.3%
    kernel, xla = _limit(time_cell), _limit(beside_cell)
    assert kernel and kernel.startswith(f"51%{NBSP_OF_LIMIT}|") and f"{4e-6 * 1e3:.4g}" in time_cell
    assert xla and xla.startswith(f"25%{NBSP_OF_LIMIT}|")
    assert "2.02 µs (compute-bound)" in kernel and "989.5 TFLOP/s" in kernel and "4.8 TB/s" in kernel
    assert "https://www.nvidia.com/en-us/data-center/h200/" in kernel
    # the XLA time alone, in the target's table above the rows
    alone = re.search(r"XLA baseline \(alone\)</th><td>(.*?)</td>", h200_html, re.S)
    assert alone and (_limit(alone.group(1)) or "").startswith(f"25%{NBSP_OF_LIMIT}|")
    # the cpu target has no sourced peaks: its times stand alone
    assert f'data-submission="{s.subs["cpu"].pk}"' in cpu_html and "of-limit" not in cpu_html


def test_the_submission_page_shows_it_per_configuration_beside_kernel_and_xla(setup):
    s = setup
    Workload.objects.filter(pk=s.w1.pk).update(
        costs={"full/a": {"flops": 2e9, "bytes": 4e6}, "full/b": {"flops": 1, "bytes": 4.8e6}}
    )
    record = cfgs.combine(
        "full",
        [
            ("a", "full/a", timed_record("gpu-h200", 4e-6, 8e-6, profile="full/a")),
            ("b", "full/b", timed_record("gpu-h200", 2e-6, 3e-6, profile="full/b")),
        ],
    )
    finish(s.subs["gpu-h200"], s.w1, record)
    html = client_for(s.users["alice"]).get(f"/submissions/{s.subs['gpu-h200'].pk}/").content.decode()
    a = _cell_texts(html, 'data-configuration="a"')
    b = _cell_texts(html, 'data-configuration="b"')
    assert (_limit(a[3]) or "").startswith(f"51%{NBSP_OF_LIMIT}|") and (_limit(a[4]) or "").startswith("25%")
    # b is memory-bound: 4.8e6 bytes / 4.8 TB/s = 1 us; 2 us and 3 us
    assert (_limit(b[3]) or "").startswith(f"50%{NBSP_OF_LIMIT}|limit 1 µs (memory-bound)")
    assert (_limit(b[4]) or "").startswith("33%")


def test_the_api_gives_each_times_percentage_with_the_peaks_and_withholds_it_while_held(setup):
    s = setup
    finish(s.subs["gpu-h200"], s.w1, timed_record("gpu-h200", 4e-6, 8e-6))
    finish(s.subs["cpu"], s.w1, timed_record("cpu", 4e-6, 8e-6, profile="small"))
    alice = client_for(s.users["alice"])
    (ev,) = alice.get(f"/api/v1/submissions/{s.subs['gpu-h200'].pk}/evaluations/").json()["results"]
    lim = ev["of_limit"]
    assert lim["candidate_pct"] == pytest.approx(100 * LIMIT_S / 4e-6)
    assert lim["baseline_pct"] == pytest.approx(100 * LIMIT_S / 8e-6)
    assert lim["roofline"]["time_s"] == pytest.approx(LIMIT_S) and lim["roofline"]["bound"] == "compute"
    assert (lim["roofline"]["peak_flops"], lim["roofline"]["peak_bandwidth"]) == (989.5e12, 4.8e12)
    assert "nvidia.com" in lim["roofline"]["source"] and lim["configurations"] is None
    (cpu_ev,) = alice.get(f"/api/v1/submissions/{s.subs['cpu'].pk}/evaluations/").json()["results"]
    assert cpu_ev["of_limit"] is None  # no sourced peaks: no figure


def test_a_held_time_has_no_figure_anywhere_public(setup):
    s = setup
    ev = finish(s.subs["gpu-h200"], s.w1, timed_record("gpu-h200", 1e-6, 8e-6, held=True))
    assert ev.review == "held"
    (api,) = Client().get(f"/api/v1/submissions/{s.subs['gpu-h200'].pk}/evaluations/").json()["results"]
    assert api["outcome"] == "held_for_review"
    assert api["of_limit"]["candidate_pct"] is None and api["of_limit"]["baseline_pct"] is None
    assert "of-limit" not in Client().get(f"/workloads/{s.w1.slug}/").content.decode()
