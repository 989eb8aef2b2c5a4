"""A busy loop beside a benchmark: the load a shared CI runner or a worker next to a web server
puts on a machine. One definition for every script that compares quiet and loaded runs."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
from collections.abc import Iterator


def _spin(core: int | None, stop) -> None:
    if core is not None:
        os.sched_setaffinity(0, {core})
    import numpy as np

    a = np.random.default_rng(0).standard_normal((256, 256))
    while not stop.is_set():
        a = np.tanh(a @ a.T / 256.0)


@contextlib.contextmanager
def busy_loop(core: int | None) -> Iterator[str]:
    """Keep one process busy (a 256x256 numpy matmul + tanh, pinned to ``core``) for the block;
    yields a line saying so."""
    stop = mp.Event()
    proc = mp.Process(target=_spin, args=(core, stop), daemon=True)
    proc.start()
    try:
        yield f"a busy numpy loop (256x256 matmul + tanh, pid {proc.pid}) runs on core {core} throughout"
    finally:
        stop.set()
        proc.join(10)
        if proc.is_alive():
            proc.kill()


def last_core() -> int:
    """The core a busy loop takes: the last this process may run on."""
    return sorted(os.sched_getaffinity(0))[-1]
