"""Reading what a child wrote, safely (trusted side)."""

from __future__ import annotations

import errno
import os
import stat


class SafeDir:
    """Read-only access to a directory the child wrote: no symlink is followed, only regular
    files are read, every read has a size cap, nothing blocks on FIFOs."""

    DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC

    def __init__(self, path: str):
        self.path = path

    def _dir_fd(self, parts: list[str]) -> int:
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for p in parts:
                if p in ("", ".", "..") or "/" in p:
                    raise OSError(errno.EINVAL, f"bad path component {p!r}")
                nfd = os.open(p, self.DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nfd
            return fd
        except BaseException:
            os.close(fd)
            raise

    def listdir(self, rel: str = "") -> list[str]:
        fd = self._dir_fd([p for p in rel.split("/") if p])
        try:
            return os.listdir(fd)
        finally:
            os.close(fd)

    def open(self, rel: str, max_bytes: int) -> int:
        """A read-only descriptor of the regular file ``rel`` (no symlink on the way), at most
        ``max_bytes`` long when opened; the caller closes it."""
        parts = [p for p in rel.split("/") if p]
        dfd = self._dir_fd(parts[:-1])
        try:
            fd = os.open(
                parts[-1], os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd
            )
        finally:
            os.close(dfd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, f"{rel} is not a regular file")
            if st.st_size > max_bytes:
                raise OSError(errno.EFBIG, f"{rel} is {st.st_size} bytes, over the cap {max_bytes}")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, rel: str, max_bytes: int) -> bytes:
        fd = self.open(rel, max_bytes)
        try:
            chunks, total = [], 0
            while True:
                b = os.read(fd, 1 << 22)
                if not b:
                    break
                total += len(b)
                if total > max_bytes:
                    raise OSError(errno.EFBIG, f"{rel} grew over the cap {max_bytes}")
                chunks.append(b)
            return b"".join(chunks)
        finally:
            os.close(fd)
