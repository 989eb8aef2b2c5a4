"""When the trusted process that started a launcher dies, nothing below the launcher is left
(issue 33.6): the launcher's death signal is caught and it kills and reaps its whole tree
first. The grandchild here arms no death signal of its own, as bubblewrap's inner process has
none while it waits for its uid maps; with a launcher killed outright it would go to init and
live on."""

import json
import os
import signal
import subprocess
import sys
import time

from jaxbench.sandbox import child

# the trusted side: starts the launcher as SandboxedChild does (new session, the status pipe
# passed, its own pid as the parent), prints the launcher's line and pid, then waits to be killed
_PARENT = """
import json, os, subprocess, sys, time
launch, pid_file = sys.argv[1], sys.argv[2]
tree = (
    "import os, time\\n"
    "if os.fork() == 0:\\n"
    "    with open(%r + '.tmp', 'w') as f: f.write(str(os.getpid()))\\n"
    "    os.rename(%r + '.tmp', %r)\\n"
    "time.sleep(600)\\n"
) % (pid_file, pid_file, pid_file)
r, w = os.pipe()
cfg = {"status_fd": w, "argv": [sys.executable, "-c", tree], "env": {}, "parent_pid": os.getpid()}
p = subprocess.Popen([sys.executable, "-I", "-S", "-B", launch, json.dumps(cfg)], pass_fds=(w,), start_new_session=True)
os.close(w)
print(os.read(r, 65536).decode().strip(), flush=True)
print(p.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


def test_the_launchers_tree_dies_with_its_parent(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, child.LAUNCH_FILE, str(pid_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    grandchild = launcher = None
    try:
        report = json.loads(parent.stdout.readline())
        assert report["type"] == "launcher" and report["steps"]["pdeathsig"], report
        launcher = int(parent.stdout.readline())
        end = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < end:
            time.sleep(0.05)
        grandchild = int(pid_file.read_text())
        assert _alive(grandchild) and _alive(launcher)

        parent.kill()
        parent.wait()

        assert _wait_gone(launcher, 30), "the launcher outlived its parent"
        assert _wait_gone(grandchild, 5), "a process below the launcher was left behind (orphaned to init)"
    finally:
        for pid in (grandchild, launcher):
            if pid is not None and _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
        parent.wait()
