"""A child's stdout and stderr, drained and capped (trusted side)."""

from __future__ import annotations

import os
import threading
from typing import IO


class Drain:
    """Reads a pipe to its end in a thread, keeping the first and the last ``cap/2`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self.stream, self.cap = stream, cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        half = self.cap // 2
        fd = self.stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            if len(self.head) < half:
                take = half - len(self.head)
                self.head += chunk[:take]
                chunk = chunk[take:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > half:
                    del self.tail[: len(self.tail) - half]

    def join(self, timeout: float | None) -> None:
        self.thread.join(timeout)

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", "replace")
        tail = bytes(self.tail).decode("utf-8", "replace")
        if self.total > len(self.head) + len(self.tail):
            return head + f"\n[... {self.total - len(self.head) - len(self.tail)} bytes dropped ...]\n" + tail
        return head + tail
