# expect: correct_slower
"""Floods stdout and stderr for its whole life, from a background thread and from every call.

A daemon thread writes 64 KiB chunks to fds 1 and 2 without pause (raw ``os.write``, no Python
buffering), and every traced call prints too. Defence: the harness drains both streams in its
own threads and keeps a capped head and tail of each (the record stays small), the child's
status channel is a separate fd, and the file-size and output caps stay in force. The kernel
itself is honest: ``correct_slower``.
"""
from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py

import os  # noqa: E402
import threading  # noqa: E402

_CHUNK = (b"JXB-FLOOD " * 6554)[:65536]


def _flood():
    while True:
        for fd in (1, 2):
            try:
                os.write(fd, _CHUNK)
            except OSError:
                pass


threading.Thread(target=_flood, daemon=True).start()


def workload(x, scale):
    print("JXB-FLOOD tracing " * 1000, flush=True)
    return rmsnorm(x, scale)
