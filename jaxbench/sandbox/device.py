"""One device-holding process per device (trusted side): the per-device lock.

libtpu lets one process per chip open it ("TPU is already in use by process ..."), and a GPU
client grabs the device's memory. So on ``tpu`` and ``gpu`` a child opens the device lazily,
only once its parent holds this device's lock: an exclusive ``flock`` on
``<lock dir>/<platform>-<chips>.lock``. Warm children wait with JAX imported and no backend
initialised; worker threads of one process and worker processes of one host are serialised
through the same file (``flock`` locks belong to an open file description, so two threads of
one process exclude each other too).

The parent (the evaluating thread), not the child, holds the lock, from before the child opens
the device until the child is dead: the candidate runs in the child (TRUST.md 1) and could
unlock a descriptor it held, letting the next child fail on a busy device. The kernel releases
the lock when its holder dies, SIGKILL included; a child killed while it holds the device
releases it by dying, and its parent releases the lock once it has reaped it.

``cpu`` is not locked (a CPU child per core, as many as the worker runs) unless
``JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE`` is on: then ``cpu`` behaves as an exclusive device, for
proving all this on a CPU host. Its fake device node (``node`` under ``<lock>.simulated/``,
bound into the sandbox) is taken by the child with a non-blocking exclusive ``flock`` when it
opens the device, and a second holder fails loudly as libtpu does ("device busy: held by pid
N"); every open and release is appended to ``log`` in the same directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from typing import Any

from .. import environment

log = logging.getLogger(__name__)

LOCKED_PLATFORMS = ("tpu", "gpu")
# the variable that says which chips a process sees (one consumer per chip on a multi-chip host)
VISIBLE_DEVICES = {
    "tpu": ("TPU_VISIBLE_CHIPS",),
    "gpu": ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"),
}
SIM_MOUNT = "/dev/jaxbench-simulated"  # where a child sees the simulated device's directory


def installed_platform() -> str:
    """Which JAX platform a child would get: a GPU/TPU plugin installed means that platform."""
    if importlib.util.find_spec("libtpu") is not None:
        return "tpu"
    for name in ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin"):
        if importlib.util.find_spec(name) is not None:
            return "gpu"
    return "cpu"


def simulated() -> bool:
    return bool(environment.get("JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE"))


def exclusive(platform: str) -> bool:
    """Whether a child on ``platform`` must hold the device lock to open its device."""
    return platform in LOCKED_PLATFORMS or (platform == "cpu" and simulated())


def lock_dir() -> str:
    return environment.get("JAXBENCH_DEVICE_LOCK_DIR") or os.path.join(tempfile.gettempdir(), "jaxbench-device-locks")


def device_name(platform: str, environ: Mapping[str, str] | None = None) -> str:
    """``tpu-0``, ``gpu-2_3``, ``tpu-all`` (no chip selected: the process opens every chip)."""
    env = os.environ if environ is None else environ
    for var in VISIBLE_DEVICES.get(platform, ()):
        value = (env.get(var) or "").strip()
        if value:
            return f"{platform}-" + "_".join(p.strip() for p in value.split(",") if p.strip())
    return f"{platform}-all"


def lock_path(platform: str) -> str:
    return os.path.join(lock_dir(), device_name(platform) + ".lock")


def sim_dir(platform: str) -> str:
    """The simulated device's directory (``node`` and ``log``), created world-writable: the
    sandbox's fresh uid opens the node and appends to the log."""
    path = os.path.join(lock_dir(), device_name(platform) + ".simulated")
    _makedirs(lock_dir())
    with contextlib.suppress(FileExistsError):
        os.mkdir(path)
    os.chmod(path, 0o777)
    for name in ("node", "log"):
        fd = os.open(os.path.join(path, name), os.O_WRONLY | os.O_CREAT, 0o666)
        os.fchmod(fd, 0o666)
        os.close(fd)
    return path


def _makedirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


class DeviceLock:
    """The exclusive lock on one device. ``acquire()`` waits (polling, so that the waiting
    thread stays interruptible) and returns the seconds waited; ``release()`` is idempotent."""

    POLL_S = 0.05

    def __init__(self, platform: str):
        self.platform = platform
        self.name = device_name(platform)
        self.path = lock_path(platform)
        self.fd: int | None = None

    def acquire(self) -> float:
        _makedirs(os.path.dirname(self.path))
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        t0 = time.monotonic()
        warned = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not warned:
                        warned = True
                        log.warning(
                            "device %s busy: held by %s; this evaluation waits for it (lock %s)",
                            self.name,
                            _read_holder(fd) or "another process",
                            self.path,
                        )
                    time.sleep(self.POLL_S)
        except BaseException:
            os.close(fd)
            raise
        waited = time.monotonic() - t0
        if warned:
            log.warning("device %s free after %.1f s", self.name, waited)
        os.ftruncate(fd, 0)
        os.pwrite(
            fd, f"pid {os.getpid()} thread {threading.current_thread().name} since {time.time():.3f}\n".encode(), 0
        )
        self.fd = fd
        return waited

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # before unlocking: the next holder writes its own line
            os.close(fd)  # closing the only descriptor of this open file releases the flock


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def state(platform: str) -> dict[str, Any]:
    """check-env: the lock's path, whether this platform is locked here, and whether the lock
    is held now (and by whom). Peeks with a non-blocking attempt released at once."""
    out: dict[str, Any] = {
        "path": lock_path(platform),
        "exclusive": exclusive(platform),
        "in_use": None,
        "holder": None,
    }
    if not os.path.exists(out["path"]):
        out["in_use"] = False
        return out
    try:
        fd = os.open(out["path"], os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        out["holder"] = f"unreadable: {exc.strerror}"
        return out
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            out["in_use"], out["holder"] = True, _read_holder(fd) or "unknown"
        else:
            out["in_use"] = False
    finally:
        os.close(fd)
    return out
