"""CPU time of a live process, from ``/proc/<pid>/stat`` (Linux): what the compile and trace
parser limits count, which the machine's load barely moves, unlike wall time."""

from __future__ import annotations

import os


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds (every thread) process ``pid`` has used, or None when it is
    gone or there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)
    except (OSError, ValueError, IndexError):
        return None
