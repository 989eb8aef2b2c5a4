"""Isolation probes: hostile candidates run through the real sandbox; the caller, the host
and the next candidate must be unaffected, and nothing of the parent may reach the child."""

import dataclasses
import json
import os
import pathlib
import re
import secrets
import socket
import subprocess
import sys
import threading
import time

from jaxbench import harness, sandbox
from tests.jaxbench.adversarial.corpus import expectations

from .conftest import CANDIDATES, source, untrusted_retried


def _probe_lines(rec, tag):
    out = rec["export_child_output"]["stdout"]
    return [line[len(tag) + 1 :] for line in out.splitlines() if line.startswith(tag + " ")]


def _matches_expectation(name, rec):
    return any(
        rec["outcome"] == o and (c is None or rec["error_category"] == c) for o, c in expectations(CANDIDATES / name)
    )


def _uid_processes(uid):
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            status = pathlib.Path(f"/proc/{d}/status").read_text()
        except OSError:
            continue
        m = re.search(r"^Uid:\s+(\d+)", status, re.M)
        if m and int(m.group(1)) == uid:
            pids.append(int(d))
    return pids


def _assert_no_leftovers(rec, wait_s=30.0):
    """No process of the child's (fresh, per-child) uid is left. The warm pool cleans a used
    child up in its own thread, so this polls for a while."""
    uid = rec["sandbox"].get("host_uid")
    if rec["sandbox"].get("unprivileged_uid") and uid:
        end = time.monotonic() + wait_s
        while _uid_processes(uid) and time.monotonic() < end:
            time.sleep(0.1)
        assert _uid_processes(uid) == [], "processes of the sandbox uid survived the evaluation"


def test_environment_is_cleared(monkeypatch):
    secret = "sekrit-" + secrets.token_hex(8)
    monkeypatch.setenv("JAXBENCH_FAKE_SECRET", secret)
    monkeypatch.setenv("DATABASE_URL", f"postgres://portal:{secret}@127.0.0.1:5432/jaxbench")
    monkeypatch.setenv("DRAMATIQ_BROKER_URL", f"redis://:{secret}@127.0.0.1:6379/0")
    monkeypatch.setenv("DJANGO_SECRET_KEY", secret)
    # a fresh child, spawned while the secrets are in this process's environment
    rec = harness.evaluate(
        "12p",
        source("probe_env.py"),
        profile="small",
        hardware="cpu",
        baseline={
            "kind": "baseline",
            "workload": "12p",
            "profile": "small",
            "hardware": "cpu",
            "harness_version": harness.HARNESS_VERSION,
            "median_s": 1.0,
        },
    )
    assert _matches_expectation("probe_env.py", rec)
    lines = _probe_lines(rec, "PROBE-ENV")
    assert lines, rec["export_child_output"]
    env = json.loads(lines[0])
    assert secret not in json.dumps(env) and secret not in json.dumps(rec)
    for name in ("JAXBENCH_FAKE_SECRET", "DATABASE_URL", "DRAMATIQ_BROKER_URL", "DJANGO_SECRET_KEY"):
        assert name not in env
    assert set(env) <= {
        "HOME",
        "TMPDIR",
        "PATH",
        "LANG",
        "JAX_PLATFORMS",
        "TF_CPP_MIN_LOG_LEVEL",
        "PYTHONDONTWRITEBYTECODE",
        "JAX_ENABLE_COMPILATION_CACHE",
        "PWD",
        "LD_LIBRARY_PATH",
        "TPU_SKIP_MDS_QUERY",
    }
    # never a compilation cache: the trusted side's (harness/xla_cache.py) holds executables it runs
    assert env.get("JAX_ENABLE_COMPILATION_CACHE") == "false"


def test_no_network(evaluate):
    hits = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                hits.append(conn)
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        src = source("probe_network.py").replace("PORTS = [5432, 6379]", f"PORTS = [5432, 6379, {port}]")
        rec = evaluate(src)
    finally:
        stop.set()
        t.join(2)
        listener.close()
    assert _matches_expectation("probe_network.py", rec)
    results = json.loads(_probe_lines(rec, "PROBE-NET")[0])
    assert not hits, "the sandbox reached a listener of the host"
    for target, res in results.items():
        assert res != "connected" and res != "resolved", (target, res)
    if rec["sandbox"]["sandbox"] == "bubblewrap":
        assert "net" in rec["sandbox"]["namespaces"]


def _evaluate_with_limits(name, limits):
    """Fresh children with tighter limits (keeps the fork/memory probes quick): the export
    child, where the probe runs, and the timer; again on fresh ones where the suite's load
    spoiled a timing (the harness's own policy)."""
    from jaxbench.harness.export import new_export_child

    def once():
        child = harness.new_timer_child("cpu", limits)
        exporter = new_export_child(dataclasses.replace(limits))
        return harness.evaluate_case(
            "12p",
            source(name),
            profile="small",
            hardware="cpu",
            require_pallas=True,
            baseline=None,
            timeouts=None,
            child=child,
            exporter=exporter,
        )

    return untrusted_retried(once)


def test_fork_bomb_is_contained():
    rec = _evaluate_with_limits("probe_fork.py", sandbox.Limits(pids=128))
    assert _matches_expectation("probe_fork.py", rec)
    line = _probe_lines(rec, "PROBE-FORK")[0]
    forked = int(re.search(r"forked=(\d+)", line).group(1))
    if rec["sandbox"]["cgroup_pids_max"]:
        assert forked < 128 and "stopped_by=BlockingIOError" in line
    _assert_no_leftovers(rec)


def test_memory_hog_is_stopped():
    rec = _evaluate_with_limits("probe_memory.py", sandbox.Limits(memory_bytes=1 << 30))
    assert _matches_expectation("probe_memory.py", rec), (rec["outcome"], rec["error_category"], rec["message"])
    assert "100GB allocated" not in rec["export_child_output"]["stdout"]
    assert "grew to 102400 MB" not in rec["export_child_output"]["stdout"]
    _assert_no_leftovers(rec)


def test_spinning_process_is_killed(evaluate):
    rec = evaluate("probe_spin.py")
    assert _matches_expectation("probe_spin.py", rec)
    assert _probe_lines(rec, "PROBE-SPIN")
    _assert_no_leftovers(rec)


def test_cannot_write_outside_work_dir(evaluate, tmp_path):
    host_targets = [
        str(tmp_path / "pwned"),
        str(pathlib.Path(__file__).parent / "PWNED"),
        "/tmp/jaxbench_pwned_" + secrets.token_hex(4),
    ]
    src = source("probe_write_outside.py").replace(
        'TARGETS = [', "TARGETS = [" + ", ".join(repr(p) for p in host_targets) + ", "
    )
    rec = evaluate(src)
    assert _matches_expectation("probe_write_outside.py", rec)
    results = json.loads(_probe_lines(rec, "PROBE-WRITE")[0])
    for path in host_targets:
        assert not os.path.exists(path), f"the candidate wrote {path} on the host"
    # only the child's private tmpfs /tmp (gone with the sandbox) takes writes
    written = [p for p, r in results.items() if r == "written"]
    if rec["sandbox"]["sandbox"] == "bubblewrap":
        assert all(p.startswith("/tmp/") for p in written), written
    assert not os.path.exists("/etc/jaxbench_pwned")
    assert socket.gethostname() != "pwned"


def test_killing_the_parent_leaves_the_caller_intact(evaluate):
    """The probe SIGKILLs its parent, PID 1 and every process it may signal (kill -1). The
    caller, the caller's parent and a bystander process of the caller's uid all survive: the
    child either lives in its own PID namespace (bubblewrap: its parent is that namespace's
    init, which ignores the signal, and no other process is there) or runs as a fresh uid that
    may signal nothing of the host's."""
    parent = os.getppid()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        rec = evaluate("probe_kill_parent.py")
        assert bystander.poll() is None, "the candidate killed a process of the caller's uid"
    finally:
        bystander.kill()
        bystander.wait()
    assert _matches_expectation("probe_kill_parent.py", rec), (rec["outcome"], rec["message"])
    assert os.getppid() == parent, "the caller's parent died (the caller was re-parented)"
    lines = _probe_lines(rec, "PROBE-KILL")
    if "pid" in rec["sandbox"]["namespaces"]:
        assert lines == ["sent to 1", "sent to 1", "-1: ProcessLookupError"], lines
    else:
        # (having killed its launcher, the child may die before it prints everything)
        assert rec["sandbox"]["unprivileged_uid"], rec["sandbox"]
        assert "sent to 1" not in lines, lines
    # the harness still works afterwards
    again = evaluate("syntax_error.py")
    assert again["outcome"] == "compile_error"


def test_segfault_is_a_runtime_error(evaluate):
    rec = evaluate("probe_segfault.py")
    assert (rec["outcome"], rec["error_category"]) == ("runtime_error", "crash")
    assert "SIGSEGV" in rec["message"]


def test_printing_gigabytes_is_capped(evaluate):
    rec = evaluate("probe_print_gigabytes.py")
    assert _matches_expectation("probe_print_gigabytes.py", rec)
    info = rec["export_child_output"]["bytes"]["stdout"]
    assert info["bytes"] >= 2 << 30 and info["truncated"]
    assert len(rec["export_child_output"]["stdout"]) <= 5000
    assert len(json.dumps(rec)) < 100_000


def test_child_sees_only_its_own_files(evaluate):
    src = '''
import json, os
seen = {p: os.path.exists(p) for p in ["/work/main", "/root", "/etc/passwd", "/site/django",
        "/site/jax", "/harness/sandbox_child.py", "/harness/pkg", "/in/candidate.py",
        "/home", "/var", "/sys/fs/cgroup"]}
seen["uid"] = os.getuid()
print("PROBE-FS " + json.dumps(seen), flush=True)
def workload(x, scale):
    return x * scale
'''
    rec = evaluate(src)
    seen = json.loads(_probe_lines(rec, "PROBE-FS")[0])
    if rec["sandbox"]["sandbox"] == "bubblewrap":
        assert seen["/site/jax"] and seen["/harness/sandbox_child.py"] and seen["/in/candidate.py"]
        for p in ("/work/main", "/etc/passwd", "/site/django", "/harness/pkg", "/home", "/var", "/sys/fs/cgroup"):
            assert not seen[p], p
        assert seen["uid"] == 65534


def test_protections_report():
    prot = harness.available_protections("cpu")
    for key in (
        "sandbox",
        "namespaces",
        "cgroup",
        "rlimits",
        "unprivileged_uid",
        "clearenv",
        "mode",
        "bubblewrap_available",
    ):
        assert key in prot
    if prot["bubblewrap_available"] and os.geteuid() == 0:
        assert prot["sandbox"] == "bubblewrap"
        assert prot["unprivileged_uid"] is True
        assert {"user", "pid", "net", "ipc", "mount"} <= set(prot["namespaces"])


def test_a_child_killed_from_outside_is_an_infrastructure_failure(baseline_12p):
    """A SIGKILL the harness did not send (the host's OOM killer, an operator) is not the
    candidate's verdict: evaluate raises ChildKilled (the worker retries it on a fresh child)
    instead of recording a runtime_error. A child's own death (a segfault) stays its verdict
    (probe_segfault.py in the corpus)."""
    import pytest

    sleeper = (
        'import time\nprint("IMPORTING-NOW", flush=True)\ntime.sleep(120)\n\n\ndef workload(x, scale):\n    return x\n'
    )
    from jaxbench.harness.export import new_export_child

    child = harness.new_timer_child("cpu", sandbox.Limits(memory_bytes=4 << 30))
    exporter = new_export_child()
    import signal as _signal

    def kill_when_compiling():  # once the candidate says it is being imported, whatever the load
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and "IMPORTING-NOW" not in exporter.stdout_tail():
            time.sleep(0.1)
        os.killpg(exporter.proc.pid, _signal.SIGKILL)

    killer = threading.Thread(target=kill_when_compiling, daemon=True)
    killer.start()
    with pytest.raises(harness.ChildKilled) as err:
        harness.evaluate_case(
            "12p",
            sleeper,
            profile="small",
            hardware="cpu",
            require_pallas=True,
            baseline=baseline_12p,  # measured ahead: no timing here for the load to spoil
            timeouts={"compile": 100},
            child=child,
            exporter=exporter,
        )
    killer.join(5)
    assert err.value.death == {"phase": "compile", "signal": "SIGKILL"}
    # what the harness recorded up to the death, for the worker's verdict on a second one
    rec = err.value.record
    assert rec["phase"] == "compile" and rec["sandbox"]["clearenv"] is True and rec["harness_version"]
    assert rec["seeds"]["check"] and rec["phases"]["total_s"] > 0
    assert "IMPORTING-NOW" in rec["export_child_output"]["stdout"]
    json.dumps(rec)


def test_a_baseline_childs_death_from_outside_is_never_a_candidates(monkeypatch):
    """No candidate's code runs in a baseline child (timed alone before the candidate's children
    start, or after they are closed): its death from outside is a plain infrastructure failure,
    with no ``death`` for the worker to count against the candidate being evaluated."""
    import pytest

    from jaxbench.harness import run as run_mod

    def killed(self):
        raise harness.ChildKilled("compile", "SIGKILL", "killed")

    monkeypatch.setattr(run_mod.Run, "compile", killed)
    with pytest.raises(harness.InfrastructureError) as err:
        harness.measure_baseline("12p", profile="small", hardware="cpu")
    assert not isinstance(err.value, harness.ChildKilled) and not hasattr(err.value, "death")
    assert "the baseline's own child: the child died of SIGKILL during compile" in str(err.value)
