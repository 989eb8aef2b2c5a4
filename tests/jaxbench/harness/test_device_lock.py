"""One device-holding process per device (``jaxbench/sandbox/device.py``), proved on CPU with
the simulated exclusive device (``JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE``): its fake node fails
loudly when two processes hold it, and every child logs when it took and released it."""

import fcntl
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from jaxbench import harness
from jaxbench.sandbox import bwrap, device
from jaxbench.sandbox.child import SandboxedChild
from jaxbench.sandbox.launch import descendants
from jaxbench.sandbox.options import SandboxOptions

from .conftest import source

TIMEOUTS = {"compile": 60, "check": 60, "timing": 120}
SELF_KILL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"


@pytest.fixture
def simulated(monkeypatch, tmp_path):
    """cpu as an exclusive device, with this test's own locks and fake node."""
    monkeypatch.setenv("JAXBENCH_DEVICE_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE", "1")
    return tmp_path / "locks"


def _node_free() -> bool:
    """Nobody holds the simulated device node (taken and given back at once)."""
    fd = os.open(os.path.join(device.sim_dir("cpu"), "node"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _holds(pid: int, path: str) -> bool:
    """Whether process ``pid`` has ``path`` open."""
    real = os.path.realpath(path)
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == real:
                return True
        except OSError:
            pass
    return False


def _intervals() -> dict:
    """child id -> [open ns, close ns or None] from the simulated device's log."""
    out: dict = {}
    with open(os.path.join(device.sim_dir("cpu"), "log")) as f:
        for line in f:
            event, ns, _pid, child = line.split()
            if event == "open":
                assert child not in out, f"child {child} opened the device twice"
                out[child] = [int(ns), None]
            else:
                assert out[child][1] is None, f"child {child} released the device twice"
                out[child][1] = int(ns)
    return out


def test_which_devices_are_locked_and_their_names(monkeypatch):
    monkeypatch.delenv("JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE", raising=False)
    assert device.exclusive("tpu") and device.exclusive("gpu")
    assert not device.exclusive("cpu")  # CPU children run side by side, one per core
    monkeypatch.setenv("JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE", "1")
    assert device.exclusive("cpu")
    assert device.device_name("tpu", {"TPU_VISIBLE_CHIPS": "3"}) == "tpu-3"
    assert device.device_name("gpu", {"CUDA_VISIBLE_DEVICES": "0, 1"}) == "gpu-0_1"
    assert device.device_name("tpu", {}) == "tpu-all"


def test_the_lock_excludes_threads_of_one_process(simulated):
    first, second = device.DeviceLock("cpu"), device.DeviceLock("cpu")
    assert first.acquire() < 1.0
    st = device.state("cpu")
    assert st["in_use"] and f"pid {os.getpid()}" in st["holder"]
    done = threading.Event()
    waited = []
    t = threading.Thread(target=lambda: (waited.append(second.acquire()), done.set()))
    t.start()
    try:
        assert not done.wait(0.5), "a second thread took a device another thread holds"
    finally:
        first.release()
    assert done.wait(30)
    t.join()
    assert waited[0] >= 0.5
    second.release()
    assert device.state("cpu")["in_use"] is False


def test_a_holder_killed_with_sigkill_releases_the_lock(simulated):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from jaxbench.sandbox import device; device.DeviceLock('cpu').acquire(); "
            "print('held', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        st = device.state("cpu")
        assert st["in_use"] and f"pid {holder.pid}" in st["holder"]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
    assert device.state("cpu")["in_use"] is False  # the kernel released it with its holder
    lock = device.DeviceLock("cpu")
    assert lock.acquire() < 1.0
    lock.release()


def test_the_simulated_device_fails_loudly_when_held_twice(simulated):
    """The tripwire the other tests rely on: a child opening the node another child holds
    fails as libtpu does. Warm children hold nothing while they wait."""
    with (
        SandboxedChild(SandboxOptions(platform="cpu")).start() as a,
        SandboxedChild(SandboxOptions(platform="cpu")).start() as b,
    ):
        a.hello(120)
        b.hello(120)
        assert a.hello_info.get("lazy_device") and "platform" not in a.hello_info
        assert _node_free(), "a warm child opened the device before it was asked to"
        a.open_device(120)
        assert a.hello_info["platform"] == "cpu" and a.protections["device_lock"] == device.lock_path("cpu")
        assert not _node_free()
        # b bypasses the lock (the harness never does): the node refuses it
        b.send({"cmd": "open"})
        reply = b.recv(120)
        assert reply["type"] == "error" and "device busy: held by pid" in reply["message"], reply
    assert device.state("cpu")["in_use"] is False  # released when a was closed
    assert _node_free()


def test_a_gpu_child_starts_without_the_device_and_without_preallocation():
    """No GPU here: the child says hello all the same, because it opens no device until asked."""
    with SandboxedChild(SandboxOptions(platform="gpu")).start() as child:
        child.hello(120)
        assert child.hello_info.get("lazy_device")
        assert child.protections["gpu_preallocate"] is False
        pythons = []
        for pid in descendants(child.proc.pid):
            try:
                if os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("python"):
                    pythons.append(pid)
            except OSError:
                pass
        assert pythons
        env = open(f"/proc/{pythons[-1]}/environ", "rb").read().split(b"\0")
        assert b"XLA_PYTHON_CLIENT_PREALLOCATE=false" in env
        assert b"CUDA_DEVICE_ORDER=PCI_BUS_ID" in env
        # what was bound is recorded: this host's NVIDIA nodes (none on a CPU-only host)
        nodes = child.protections["device_nodes"]
        if child.protections["sandbox"] == "bubblewrap":
            assert nodes == bwrap.device_nodes("gpu")
        else:
            assert nodes is None


class _Waiting(logging.Handler):
    def __init__(self):
        super().__init__()
        self.busy = []

    def emit(self, record):
        if "busy: held by" in record.getMessage():
            self.busy.append(record.threadName)


@pytest.mark.slow
def test_concurrent_evaluations_and_a_warm_pool_hold_the_device_one_at_a_time(simulated, baseline_12p):
    """Four evaluations at once (two in fresh children, two through a warm pool) are released
    together onto the simulated device: each waited for it, each is correct (a second holder
    of the node would have failed), the logged holds do not overlap, and the evaluating
    process itself never held the node."""
    src = source("correct_rmsnorm.py")
    waiting = _Waiting()
    logger = logging.getLogger("jaxbench.sandbox.device")
    logger.addHandler(waiting)
    records, errors = {}, []
    gate = device.DeviceLock("cpu")
    gate.acquire()  # the test holds the device: every evaluation must queue behind it
    pool = harness.WarmPool("cpu", size=2)  # a warm child for each of the two pool threads
    try:

        def run(name, fn):
            try:
                records[name] = fn(
                    "12p", src, profile="small", hardware="cpu", baseline=baseline_12p, timeouts=TIMEOUTS
                )
            except Exception as exc:
                errors.append(f"{name}: {type(exc).__name__}: {exc}")

        threads = [
            threading.Thread(target=run, args=(f"{kind}-{i}", fn), name=f"eval-{kind}-{i}")
            for i in range(2)
            for kind, fn in (("fresh", harness.evaluate), ("warm", pool.evaluate))
        ]
        for t in threads:
            t.start()
        end = time.monotonic() + 120
        while len(set(waiting.busy)) < 4 and time.monotonic() < end and not errors:
            time.sleep(0.05)
        assert len(set(waiting.busy)) == 4, (waiting.busy, errors)
        assert _node_free(), "a waiting or warm child opened the device"
        gate.release()
        for t in threads:
            t.join(300)
        assert not errors, errors
    finally:
        gate.release()
        pool.close()
        logger.removeHandler(waiting)
    assert len(records) == 4
    for name, rec in records.items():
        assert rec["outcome"].startswith("correct"), (name, rec["outcome"], rec["message"])
        assert rec["phases"]["device_wait_s"] > 0
        assert rec["sandbox"]["device_lock"] == device.lock_path("cpu")
    holds = sorted(_intervals().values())
    assert len(holds) >= 4  # and a baseline re-measured by the guard, where it tripped
    for (_, closed), (opened, _) in zip(holds, holds[1:], strict=False):
        assert closed is not None and closed <= opened, "two children held the device at once"
    assert not _holds(os.getpid(), os.path.join(device.sim_dir("cpu"), "node"))
    assert device.state("cpu")["in_use"] is False


@pytest.mark.slow
def test_the_candidates_own_process_never_holds_the_device(simulated, baseline_12p):
    """A candidate that kills its own process kills the export child, which has no device: the
    device was never taken for it, and the next evaluation takes it at once."""
    with pytest.raises(harness.ChildKilled):
        harness.evaluate("12p", SELF_KILL, profile="small", hardware="cpu", baseline=baseline_12p, timeouts=TIMEOUTS)
    assert _intervals() == {}
    assert device.state("cpu")["in_use"] is False
    rec = harness.evaluate(
        "12p", source("correct_rmsnorm.py"), profile="small", hardware="cpu", baseline=baseline_12p, timeouts=TIMEOUTS
    )
    assert rec["outcome"].startswith("correct"), rec["message"]
    assert rec["phases"]["device_wait_s"] < 5


def test_a_timer_killed_while_holding_the_device_releases_it(simulated, baseline_12p):
    """The timer killed from outside while it holds the device (the host's OOM killer, say):
    the device is given back when its process is dead, and the next evaluation gets it."""
    from jaxbench.harness.prepare import limits_for
    from jaxbench.harness.run import new_timer_child

    timer = new_timer_child("cpu", limits_for(harness.prepare.workload_of("12p"), "small", "cpu", 6))

    def checking():  # it holds the device and the check phase has begun (its inputs are there)
        sets = os.path.join(timer.in_dir, "sets")
        return bool(_intervals()) and os.path.isdir(sets) and bool(os.listdir(sets))

    def kill_once_it_holds_the_device():  # whatever the load: it waits for the check phase
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not checking():
            time.sleep(0.02)
        os.killpg(timer.proc.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_it_holds_the_device, daemon=True)
    killer.start()
    with pytest.raises(harness.ChildKilled):
        harness.api.evaluate_case(
            "12p",
            source("slow_rmsnorm.py"),
            profile="small",
            hardware="cpu",
            require_pallas=True,
            baseline=baseline_12p,
            timeouts=TIMEOUTS,
            child=timer,
        )
    killer.join(5)
    holds = _intervals()
    assert [c for _, c in holds.values()] == [None]  # it took the device and never released it
    assert device.state("cpu")["in_use"] is False
    rec = harness.evaluate(
        "12p", source("correct_rmsnorm.py"), profile="small", hardware="cpu", baseline=baseline_12p, timeouts=TIMEOUTS
    )
    assert rec["outcome"].startswith("correct"), rec["message"]
    assert rec["phases"]["device_wait_s"] < 5
    assert len(_intervals()) >= 2


def test_check_env_reports_the_device_lock_and_waits_for_it(simulated):
    lock = device.DeviceLock("cpu")
    lock.acquire()
    env = dict(os.environ, JAXBENCH_PLATFORM="cpu")
    proc = subprocess.Popen([sys.executable, "-m", "jaxbench", "check-env"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stdout.readline()
        assert first.startswith("device lock") and "in use, held by pid " + str(os.getpid()) in first, first
    finally:
        lock.release()
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert f"device_lock          {device.lock_path('cpu')}" in out
    assert "packages        all the harness needs beside JAX" in out
    proc = subprocess.run([sys.executable, "-m", "jaxbench", "check-env"], capture_output=True, text=True, env=env)
    assert proc.stdout.startswith(f"device lock     {device.lock_path('cpu')}: free"), proc.stdout[:300]
