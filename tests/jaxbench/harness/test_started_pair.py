"""Children started before JAX is imported (``sandbox.pair``; the command line's evaluate): the
evaluation takes them where they serve its case, and nothing started is left open."""

import pathlib
import subprocess
import sys

import pytest

from jaxbench import cli, harness
from jaxbench.record import CORRECT_OUTCOMES
from jaxbench.sandbox import Limits, cores, host, pair

from .conftest import source, untrusted_retried

REPO = pathlib.Path(__file__).resolve().parents[3]


def test_the_pair_module_imports_no_jax():
    code = "import sys, jaxbench.sandbox.pair; print('jax' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "False"


def test_limits_cover():
    need = Limits(memory_bytes=6 << 30)
    assert pair.covers(pair.warm_limits("cpu"), need)
    assert not pair.covers(Limits(memory_bytes=1 << 30), need)
    assert not pair.covers(pair.warm_limits("cpu"), Limits(memory_bytes=6 << 30, work_bytes=3 << 30))


def test_an_evaluation_takes_the_started_pair(baseline_12p):
    def run():
        started = pair.start_pair("cpu")
        rec = harness.evaluate(
            "12p", source("correct_rmsnorm.py"), profile="small", hardware="cpu", baseline=baseline_12p, started=started
        )
        return rec, started

    rec, (timer, exporter) = untrusted_retried(run)
    assert rec["outcome"] in CORRECT_OUTCOMES, rec["message"]
    # greeted (so used) and closed, every process of them gone
    assert timer.hello_info is not None and exporter.hello_info is not None
    assert timer.closed and exporter.closed and timer.dead() and exporter.dead()


def test_a_pair_too_small_for_the_case_is_closed_and_fresh_children_run_it(baseline_12p):
    def run():
        small = pair.timer_child("cpu", Limits(memory_bytes=1 << 30))
        started = (small, pair.export_child())
        rec = harness.evaluate(
            "12p", source("correct_rmsnorm.py"), profile="small", hardware="cpu", baseline=baseline_12p, started=started
        )
        return rec, started

    rec, (timer, exporter) = untrusted_retried(run)
    assert rec["outcome"] in CORRECT_OUTCOMES, rec["message"]
    assert timer.hello_info is None and exporter.hello_info is None  # never used
    assert timer.closed and exporter.closed and timer.dead() and exporter.dead()


def test_the_command_line_closes_its_children_on_a_usage_error(monkeypatch, capsys, tmp_path):
    started = []
    real = cli._start_children

    def start(hardware):
        got = real(hardware)
        started.append(got)
        return got

    monkeypatch.setattr(cli, "_start_children", start)
    kernel = tmp_path / "kernel.py"
    kernel.write_text(source("correct_rmsnorm.py"))
    code = cli.main(["evaluate", "--workload", "no-such-workload", "--kernel", str(kernel), "--hardware", "cpu"])
    assert code == cli.EXIT_USAGE and "unknown workload" in capsys.readouterr().err
    ((timer, exporter),) = started
    assert timer.closed and exporter.closed and timer.dead() and exporter.dead()


def test_an_export_child_is_pinned_off_its_timers_core():
    if host.default_cpus("cpu") != ["auto"] or len(cores.work_cores()) < 2:
        pytest.skip("needs two cores the children may be pinned to")
    timer, exporter = pair.start_pair("cpu")
    try:
        timer.hello(120)
        pair.beside(exporter, timer)
        exporter.hello(120)
        assert exporter.avoid_cores == timer.protections["cpu_affinity"]
        assert set(timer.protections["cpu_affinity"]).isdisjoint(exporter.protections["cpu_affinity"])
    finally:
        timer.close()
        exporter.close()
