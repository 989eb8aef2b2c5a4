"""Each child's run dir (trusted side): made under the base directory with its owner's name,
removed when the child closes, and swept at the next start when its owner was killed.

A run dir is ``<base>/jaxbench-run-<pid>.<start>-<random>``: the pid and the start time (clock
ticks since boot) of the process that made it. ``SandboxedChild.close()`` removes it; a process
killed outright (SIGKILL, a machine's OOM killer) cannot, so :func:`sweep` removes the run dirs
whose owner no longer runs (that pid gone, or a different process under it), and only those of
this naming that this user owns, in the base directory only (which one pid namespace uses).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile

PREFIX = "jaxbench-run-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)\.(\d+)-[A-Za-z0-9_]+")


def base(base_dir: str | None = None) -> str:
    return base_dir or tempfile.gettempdir()


def start_ticks(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), or None if none runs under it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[19])  # field 22, starttime
    except (OSError, ValueError, IndexError):
        return None


def make(base_dir: str | None = None) -> str:
    """A new run dir owned by this process (mode 0711: a child's fresh uid may pass through)."""
    pid = os.getpid()
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{pid}.{start_ticks(pid) or 0}-", dir=base(base_dir))
    os.chmod(path, 0o711)
    return path


def remove(path: str) -> None:
    """Remove a run dir whose child is dead. Where the worker is not root, the child ran as this
    uid and may have left directories without write or search permission: they are opened up
    first (never through a symlink), which rmtree alone cannot do."""
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path) or os.geteuid() == 0:
        return
    for root, dirs, _files in os.walk(path):  # top-down: each dir is opened before walk enters it
        for d in [root] + [os.path.join(root, d) for d in dirs]:
            try:
                if stat.S_ISDIR(os.lstat(d).st_mode):
                    os.chmod(d, 0o700)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)


def sweep(base_dir: str | None = None) -> list[str]:
    """Remove the run dirs in the base directory whose owner no longer runs; returns them."""
    where = base(base_dir)
    removed: list[str] = []
    if start_ticks(os.getpid()) is None:
        return removed  # no /proc: no telling whose run dirs are alive
    try:
        names = os.listdir(where)
    except OSError:
        return []
    for name in names:
        m = _NAME.fullmatch(name)
        if not m:
            continue
        path = os.path.join(where, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        pid, ticks = int(m.group(1)), int(m.group(2))
        if start_ticks(pid) == ticks:
            continue  # its owner runs: its children may still use it
        remove(path)
        removed.append(path)
    return removed
