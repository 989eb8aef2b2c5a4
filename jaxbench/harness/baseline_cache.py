"""The command line's disk cache of the baseline measured alone (the guard's reference).

Each ``python -m jaxbench evaluate`` is a new process, so the process-memory cache of
``api._cached_baseline`` never outlives one evaluation there: without this file every run
starts a third cold child only to time the XLA baseline alone. Here that record is kept on disk
for the next run, keyed by everything the figure depends on (:func:`key_for`). The worker keeps
its baseline in its database and passes it to each evaluation; on a miss there it looks here
first (``api.baseline_alone``, from ``evaluator.runner.baseline_for``), so a new worker database
on a host where a worker or the command line already timed it starts no cold child for it.

A record is reused only when its stored key equals the wanted key exactly and it is recent
(``JAXBENCH_BASELINE_CACHE_DAYS``, 7 by default; 0 turns the disk cache off). Anything else (a
missing, unreadable, oversized, truncated or malformed file, another key, a record that is not a
baseline with a positive finite median, an old one) is a miss, never an error; a store that
fails (a read-only home) warns on stderr and the evaluation goes on. The figure is only the
guard's reference: speedups come from the timings side by side with the candidate, and a
reference that no longer fits the machine trips the guard, which measures alone again.

Trust: only the trusted side writes here (the harness process that measured the baseline), never
a candidate's child. Under bubblewrap (``bwrap``, ``bwrap-unprivileged``) a child sees the system
libraries, the interpreter, the allowlisted packages and its own in/work directories
(``sandbox/bwrap.py``), never the user's home; ``none-unprivileged`` runs it as another uid,
kept out by the directory's 0o700 and by :func:`load`'s owner check. In ``none`` mode (no
bubblewrap, not root) the child runs as the user and could write here, as it could rewrite the
harness itself: that mode is no sandbox against a hostile candidate.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import os
import platform as platform_mod
import socket
import stat
import sys
import tempfile
import time
from typing import Any

from .. import HARNESS_VERSION, environment
from ..sandbox import cores, host
from ..workloads.base import Workload

FORMAT = 1
MAX_BYTES = 4 << 20  # a baseline record is a few kB; anything larger is not one of ours
DAY_S = 86400.0
# a record timed this far in the future (a clock that went back) is not trusted as recent
CLOCK_SLACK_S = 300.0

Record = dict[str, Any]
Key = dict[str, Any]


def cache_root() -> str:
    """The trusted side's cache directory on this host: ``$JAXBENCH_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/jaxbench`` (an absolute XDG_CACHE_HOME only, as the XDG specification
    says), else ``~/.cache/jaxbench``."""
    root = str(environment.get("JAXBENCH_CACHE_DIR") or "")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or ""
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "jaxbench")
    return os.path.abspath(os.path.expanduser(root))


def cache_dir() -> str:
    """Where baseline records go: ``baselines`` under :func:`cache_root`."""
    return os.path.join(cache_root(), "baselines")


def max_age_s() -> float:
    """How old a stored record may be (seconds); 0: the disk cache is off."""
    days = float(environment.get("JAXBENCH_BASELINE_CACHE_DAYS"))
    return days * DAY_S if math.isfinite(days) and days > 0 else 0.0


def enabled() -> bool:
    return max_age_s() > 0


# -- the key -------------------------------------------------------------------------------------


def host_identity() -> Key:
    """This machine: its host name and CPU model (``/proc/cpuinfo``'s model name, else what
    ``platform.processor()`` says)."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                name, sep, value = line.partition(":")
                if sep and name.strip() == "model name":
                    model = value.strip()
                    break
    except OSError:
        pass
    return {"hostname": socket.gethostname(), "cpu_model": model or platform_mod.processor() or "unknown"}


def timer_cores(platform: str) -> int:
    """How many cores the baseline's timing phase may run on (``harness.run.Run.on_timing_core``):
    the dedicated timing cores where there are any, else the child's own (one core when pinned
    automatically, ``JAXBENCH_CPU_CORES``' when chosen); unpinned children (accelerators,
    ``JAXBENCH_CPU_CORES=all``) every core of the machine."""
    machine = len(cores.machine_cores())
    if platform != "cpu":
        return machine
    dedicated = cores.timing_cores()
    if dedicated:
        return len(dedicated)
    pinned = host.default_cpus(platform)
    if pinned is None:
        return machine
    return 1 if pinned == ["auto"] else len(pinned)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def reference_hash(wl: Workload) -> str:
    """sha256 of the workload's reference: its source and its helpers' (``versions.content_parts``),
    with the rest of its definition's hash (inputs, profiles, tolerance)."""
    from ..workloads.versions import content_parts  # deferred: the workloads package is large

    try:
        parts: Any = [content_parts(wl)["reference"], wl.content_hash]
    except (OSError, TypeError, SyntaxError):  # no source to read (a workload built at run time)
        parts = [repr(wl.reference), wl.id]
    blob = json.dumps(parts, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def key_for(wl: Workload, profile: str, hardware: str, platform: str) -> Key:
    """Everything the baseline alone depends on. ``hardware``: the target's slug, or
    ``detected:<platform>`` where the child's device decides."""
    return {
        "format": FORMAT,
        "workload": wl.id,
        "workload_version": wl.version,
        "reference_sha256": reference_hash(wl),
        "profile": profile,
        "hardware": hardware,
        "host": host_identity(),
        "timer_cores": timer_cores(platform),
        "timing": environment.get("JAXBENCH_TIMING"),
        "jax_version": _version("jax"),
        "jaxlib_version": _version("jaxlib"),
        "harness_version": HARNESS_VERSION,
    }


def _canonical(key: Key) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def path_for(key: Key) -> str:
    return os.path.join(cache_dir(), hashlib.sha256(_canonical(key).encode()).hexdigest() + ".json")


# -- reading and writing ---------------------------------------------------------------------------


def _read_capped(path: str) -> bytes | None:
    """The file's bytes: ours (this uid), a regular file, not a link, not writable by others,
    at most MAX_BYTES; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        if st.st_size > MAX_BYTES:
            return None
        chunks, left = [], MAX_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if len(data) > MAX_BYTES else data
    except OSError:
        return None
    finally:
        os.close(fd)


def _positive_finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def load(key: Key, *, now: float | None = None) -> Record | None:
    """The stored record for ``key``, or None (a miss: see the module's docstring)."""
    age_limit = max_age_s()
    if age_limit <= 0:
        return None
    data = _read_capped(path_for(key))
    if data is None:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    rec = doc.get("record")
    if not isinstance(rec, dict) or rec.get("kind") != "baseline" or not _positive_finite(rec.get("median_s")):
        return None
    if any(rec.get(k) != key[k] for k in ("workload", "profile", "harness_version")):
        return None
    measured = rec.get("measured_at")
    if not isinstance(measured, int | float) or not _positive_finite(measured):
        return None
    age = (time.time() if now is None else now) - measured
    if age > age_limit or age < -CLOCK_SLACK_S:
        return None
    return rec


def store(key: Key, record: Record) -> str | None:
    """Keep ``record`` for ``key`` (atomically: a temporary file in the same directory, synced,
    then renamed over the old one; 0o600 in a 0o700 directory). Returns the path, or None where
    the cache is off or the write failed (a warning on stderr; the caller goes on)."""
    if not enabled():
        return None
    path = path_for(key)
    directory = os.path.dirname(path)
    tmp = None
    try:
        blob = json.dumps({"key": key, "stored_at": time.time(), "record": record}, allow_nan=False).encode()
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")  # 0o600
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        return path
    except (OSError, TypeError, ValueError) as exc:
        print(f"jaxbench: the baseline was not cached in {directory}: {exc}", file=sys.stderr)
        return None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
