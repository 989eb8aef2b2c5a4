"""The timing core (jaxbench/sandbox/cores.py): one timing phase per core at a time, a dedicated
core the portal's other processes keep off, and the core's other work measured over the phase;
a phase whose core was mostly someone else's is timed again, never labelled."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest

from jaxbench import environment, harness
from jaxbench.harness import api
from jaxbench.harness import run as run_module
from jaxbench.sandbox import cores
from jaxbench.sandbox.child import SandboxedChild
from jaxbench.sandbox.host import CoreTimes

TWO_CORES = len(os.sched_getaffinity(0)) >= 2


def _times(busy: int, total: int, steal: int = 0) -> dict[int, CoreTimes]:
    return {1: CoreTimes(busy, total, steal)}


def test_contention_is_the_cores_busy_time_less_the_timers_own():
    hz = os.sysconf("SC_CLK_TCK")
    before, after = _times(0, 0), _times(100, 100)  # a fully busy core over 100 ticks
    own = 0.9 * 100 / hz  # the timer had 90 of them
    got = cores.contention(before, after, [1], own)
    assert got["own"] == pytest.approx(0.9) and got["foreign"] == pytest.approx(0.1)
    assert got["trusted"] and got["elapsed_s"] == pytest.approx(100 / hz, abs=1e-3)


def test_a_core_mostly_busy_with_other_work_is_not_trusted():
    hz = os.sysconf("SC_CLK_TCK")
    got = cores.contention(_times(0, 0), _times(100, 100), [1], 0.2 * 100 / hz)
    assert got["foreign"] == pytest.approx(0.8) and not got["trusted"]
    # steal counts against the phase too: the hypervisor ran another guest on the core
    got = cores.contention(_times(0, 0, 0), _times(100, 100, 60), [1], 0.2 * 100 / hz)
    assert got["steal"] == pytest.approx(0.6) and got["foreign"] == pytest.approx(0.2)
    assert not got["trusted"]
    # exactly at the limit still stands
    at = 1 - cores.CONTENTION_LIMIT
    assert cores.contention(_times(0, 0), _times(100, 100), [1], at * 100 / hz)["trusted"]


def test_a_phase_too_short_to_read_or_without_the_timers_own_time_stands():
    assert cores.contention(_times(0, 0), _times(2, 2), [1], 0.0)["trusted"]
    got = cores.contention(_times(0, 0), _times(100, 100), [1], None)
    assert got["trusted"] and got["foreign"] is None and got["busy"] == 1.0


@pytest.mark.parametrize(
    ("raw", "machine", "want"),
    [
        ("", [0, 1], []),  # 2 cores: no core is dedicated unless asked
        ("", [0, 1, 2, 3], [3]),  # 4 or more: the last one
        ("last", [0, 1], [1]),
        ("none", [0, 1, 2, 3], []),
        ("0,2", [0, 1, 2, 3], [0, 2]),
        ("last", [0], []),  # one core: nothing to dedicate
    ],
)
def test_which_cores_are_dedicated(monkeypatch, raw, machine, want):
    monkeypatch.setenv("JAXBENCH_TIMING_CORES", raw)
    monkeypatch.setenv("JAXBENCH_MACHINE_CORES", ",".join(map(str, machine)))
    assert cores.timing_cores() == want
    assert cores.work_cores() == [c for c in machine if c not in want]


@pytest.mark.parametrize("raw", ["0,1", "7", "one"])
def test_a_timing_core_setting_that_leaves_nothing_or_is_not_a_core_is_refused(monkeypatch, raw):
    monkeypatch.setenv("JAXBENCH_TIMING_CORES", raw)
    monkeypatch.setenv("JAXBENCH_MACHINE_CORES", "0,1")
    with pytest.raises(environment.ConfigError, match="JAXBENCH_TIMING_CORES"):
        cores.timing_cores()


@pytest.mark.skipif(not TWO_CORES, reason="needs two cores")
def test_a_process_kept_off_the_timing_core_keeps_every_thread_and_child_off_it():
    last = max(os.sched_getaffinity(0))
    script = textwrap.dedent(
        """
        import json, os, subprocess, sys, threading
        from jaxbench.sandbox import cores
        t = threading.Thread(target=threading.Event().wait, args=(5,), daemon=True)
        t.start()  # a thread that exists before: it is moved too
        kept = cores.keep_off_timing_cores()
        tids = [int(x) for x in os.listdir("/proc/self/task")]
        child = subprocess.run([sys.executable, "-c",
            "import os, json; from jaxbench.sandbox import cores; "
            "print(json.dumps([sorted(os.sched_getaffinity(0)), cores.machine_cores(), cores.timing_cores()]))"],
            capture_output=True, text=True, check=True)
        print(json.dumps({"kept": kept, "threads": [sorted(os.sched_getaffinity(t)) for t in tids],
                          "child": json.loads(child.stdout)}))
        """
    )
    env = {**os.environ, "JAXBENCH_TIMING_CORES": "last"}
    env.pop("JAXBENCH_MACHINE_CORES", None)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    got = json.loads(out.stdout)
    assert last not in got["kept"]
    assert all(last not in t for t in got["threads"]) and len(got["threads"]) >= 2
    child_affinity, child_machine, child_timing = got["child"]
    assert last not in child_affinity  # inherited
    assert last in child_machine and child_timing == [last]  # and it still knows the timing core


def test_one_timing_phase_per_core_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXBENCH_DEVICE_LOCK_DIR", str(tmp_path))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom jaxbench.sandbox import cores\n"
            "with cores.timing_slot([5]):\n    print('held', flush=True)\n    time.sleep(1.5)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "JAXBENCH_DEVICE_LOCK_DIR": str(tmp_path)},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with cores.timing_slot([6]) as other_core_wait:  # another core's lock is free
        assert other_core_wait < 0.5
    t0 = time.monotonic()
    with cores.timing_slot([5, 6]) as waited:
        assert time.monotonic() - t0 >= 0.8 and waited >= 0.8
    holder.wait(10)


@pytest.mark.skipif(not TWO_CORES, reason="needs two cores")
def test_an_evaluation_times_on_the_dedicated_core_and_moves_back(evaluate, monkeypatch):
    monkeypatch.setenv("JAXBENCH_TIMING_CORES", "last")
    last = max(os.sched_getaffinity(0))
    moves = []
    real_confine = SandboxedChild.confine

    def confine(self, cpus):
        moves.append(list(cpus))
        return real_confine(self, cpus)

    monkeypatch.setattr(SandboxedChild, "confine", confine)
    rec = evaluate(_EXAMPLE_12P)
    assert rec["outcome"].startswith("correct"), rec["message"]
    got = rec["timing"]["contention"]
    assert got["cores"] == [last]
    # the timer moved onto the timing core for the phase and back to a core beside it
    assert [last] in moves and moves[-1] != [last]
    if got.get("own") is not None:
        # the core was busy at least as long as the timer worked (a clock tick of slack):
        # the timer's CPU time was spent on that core
        assert got["busy"] + 0.15 >= got["own"] > 0
    assert rec["phases"]["timing_core_wait_s"] >= 0


def test_a_contended_phase_is_timed_again_never_labelled(evaluate, monkeypatch):
    """Every timing phase seen as mostly someone else's: the case is re-timed on fresh
    children and, past the retries, it is the caller's infrastructure error."""
    monkeypatch.setattr(api, "LOAD_RETRY_WAITS_S", (0.0,))
    real = cores.contention

    def contended(*args):
        return {**real(*args), "foreign": 0.9, "steal": 0.0, "trusted": False}

    monkeypatch.setattr(run_module.cores, "contention", contended)
    with pytest.raises(harness.MeasurementUntrusted, match=r"timing core .* \(2 attempts\)"):
        evaluate(_EXAMPLE_12P)


_EXAMPLE_12P = (pathlib.Path(__file__).resolve().parents[3] / "jaxbench/kernels/examples/12p-rmsnorm.py").read_text()


def test_a_pool_refills_ahead_only_where_the_start_up_cannot_touch_the_timed_core(monkeypatch):
    from jaxbench.harness.warm import auto_refill

    monkeypatch.setenv("JAXBENCH_TIMING_CORES", "none")
    assert auto_refill("cpu") == "after"  # children would start on the core a timer may use
    assert auto_refill("tpu") == auto_refill("gpu") == "immediately"  # device-side timing
    monkeypatch.setenv("JAXBENCH_TIMING_CORES", "last")
    assert auto_refill("cpu") == "immediately"  # the timer has a core of its own
