"""Nothing left behind (issue 33.6): a child's run dir goes when the child closes, when it fails
to start, and, when its worker was killed outright, at the next worker start (rundir.sweep)."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

from jaxbench.sandbox import child as child_module
from jaxbench.sandbox import rundir
from jaxbench.sandbox.child import SandboxedChild
from jaxbench.sandbox.options import SandboxOptions


def test_a_child_that_fails_to_start_leaves_no_run_dir(tmp_path, monkeypatch):
    def no_launcher(*args, **kwargs):
        raise OSError("the launcher could not be executed (simulated)")

    monkeypatch.setattr(child_module.subprocess, "Popen", no_launcher)
    child = SandboxedChild(SandboxOptions(mode="none", base_dir=str(tmp_path)))
    assert os.listdir(tmp_path) == [os.path.basename(child.run_dir)]
    with pytest.raises(OSError, match="simulated"):
        child.start()
    assert child.closed and os.listdir(tmp_path) == []


def test_a_child_refused_at_construction_leaves_no_run_dir(tmp_path):
    with pytest.raises(ValueError, match="role"):
        SandboxedChild(SandboxOptions(role="judge", base_dir=str(tmp_path)))
    assert os.listdir(tmp_path) == []


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_the_sweep_removes_only_run_dirs_whose_owner_is_gone(tmp_path):
    mine = rundir.make(str(tmp_path))
    dead = tmp_path / f"{rundir.PREFIX}{_dead_pid()}.12345-abcd1234"
    (dead / "work" / "locked").mkdir(parents=True)
    (dead / "work" / "locked" / "out.bin").write_bytes(b"x")
    (dead / "work" / "locked").chmod(0o000)  # what a candidate may leave (as the worker's uid)
    reused = tmp_path / f"{rundir.PREFIX}{os.getpid()}.1-efgh5678"  # this pid, another start time
    reused.mkdir()
    others = ["jaxbench-device-locks", "jaxbench-abcd1234", f"{rundir.PREFIX}1.2-link"]
    (tmp_path / others[0]).mkdir()
    (tmp_path / others[1]).mkdir()
    (tmp_path / others[2]).symlink_to(dead)
    assert sorted(rundir.sweep(str(tmp_path))) == sorted([str(dead), str(reused)])
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(mine), *others])


KILLED_WORKER = textwrap.dedent(
    """
    import os, signal, sys
    from jaxbench.sandbox.child import SandboxedChild
    from jaxbench.sandbox.options import SandboxOptions
    child = SandboxedChild(SandboxOptions(base_dir=sys.argv[1])).start()
    print(child.run_dir, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_a_killed_workers_run_dir_is_swept_at_the_next_start():
    base = tempfile.mkdtemp(prefix="jaxbench-test-base-")  # reachable by a child's fresh uid
    os.chmod(base, 0o711)
    try:
        proc = subprocess.run([sys.executable, "-c", KILLED_WORKER, base], capture_output=True, text=True, timeout=120)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        left = proc.stdout.strip()
        assert os.path.isdir(left), "a killed worker cannot clean up: its run dir stays"
        assert rundir.sweep(base) == [left]
        assert os.listdir(base) == []
    finally:
        rundir.remove(base)
