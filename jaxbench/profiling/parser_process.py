"""The trace parser's process, kept for the rounds of one timing phase (trusted side).

Each trace is hostile input (xplane.py): it is parsed in a separate, resource-limited process
(:mod:`.xplane_worker`) that gets the file's descriptor, never its bytes. Starting that process
(``python -I``, then numpy under the limits) costs ~0.15 s, more than parsing one round's trace,
so a :class:`TraceParser` keeps one process for several traces: those of one case's timing
rounds, all written by the same timer child. It carries nothing from one request to the next
but the imports: each request gets its own descriptor (``SCM_RIGHTS`` over a socket pair), its
own CPU allowance (RLIMIT_CPU raised to the time used so far plus ``cpu_s``) and wall limit,
and the reply is its own.

A verdict must not depend on which process parsed the trace. The address space is shared by the
requests of one process (a limit an earlier parse left fragmented could refuse a later trace that
a fresh process would read), so a request that fails on a limit in a process that has served
before is parsed once more in a fresh one, and that answer stands: every limit verdict is a fresh
process's. After any failure the process is discarded (the next request starts another).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from typing import Any

from .xplane import (
    _LIMIT_MESSAGE,
    MAX_FILE_BYTES,
    PARSE_CPU_S,
    PARSE_MEM_BYTES,
    PARSE_WALL_S,
    Executions,
    ParserStarved,
    ParserUnavailable,
    TraceError,
    TraceSummary,
    _check_fd,
    _open_trace,
)

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_MAX_REPLY = 64 << 20  # a reply holds at most a few programs' executions (xplane's caps)


class _Failed(Exception):
    """A request the process could not answer within its limits (the trace's, unless a fresh
    process says otherwise)."""

    def __init__(self, error: TraceError, reused: bool) -> None:
        super().__init__(str(error))
        self.error, self.reused = error, reused


class TraceParser:
    """One parser process, started at the first :meth:`parse` and reused by the next ones until
    :meth:`close` (or a context manager's end). Not thread-safe: one per timing phase."""

    def __init__(
        self, *, mem_bytes: int = PARSE_MEM_BYTES, cpu_s: int = PARSE_CPU_S, wall_s: float = PARSE_WALL_S
    ) -> None:
        self.mem_bytes, self.cpu_s, self.wall_s = int(mem_bytes), int(cpu_s), float(wall_s)
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._served = 0  # requests the current process answered
        self.started = 0  # processes started, over this parser's life

    # ------------------------------------------------------------------ the process

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        code = (
            f"import sys; sys.path.insert(0, {_ROOT!r}); from jaxbench.profiling import xplane_worker; "
            f"xplane_worker.serve({theirs.fileno()}, {self.mem_bytes})"
        )
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
        env.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", code],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                cwd="/",
                env=env,
            )
        except OSError as exc:  # no process, no pipe: nothing the trace did
            ours.close()
            raise ParserUnavailable(f"the trace parser could not start: {exc}") from None
        finally:
            theirs.close()
        self._sock, self._served = ours, 0
        self.started += 1

    def _discard(self) -> tuple[int | None, str]:
        """Kill the process; its exit status and the last line it wrote to stderr."""
        proc, sock = self._proc, self._sock
        self._proc = self._sock = None
        if sock is not None:
            sock.close()
        if proc is None:
            return None, ""
        if proc.poll() is None:
            proc.kill()
        try:
            _, err = proc.communicate(timeout=10)
        except (subprocess.TimeoutExpired, ValueError):
            err = b""
        tail = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:]
        return proc.returncode, tail[0][:300] if tail else ""

    def close(self) -> None:
        proc, sock = self._proc, self._sock
        self._proc = self._sock = None
        if sock is not None:
            sock.close()  # the process reads EOF and exits
        if proc is not None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()

    def __enter__(self) -> TraceParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ a request

    def parse(self, path: str | int, names: list[str], platform: str, expected: int | None = None) -> TraceSummary:
        """Parse the trace at ``path`` (or behind the open descriptor ``path``, which stays open)
        and select the programs ``names`` (``jit_<name>`` modules) for ``platform``;
        ``expected``: how many executions of each the child ran (GPU's kernel grouping needs it).

        A malformed trace, one over a cap, or one whose program does not select raises
        TraceError (per program: when :meth:`TraceSummary.executions` asks for it); a parser
        that runs out of memory or CPU time raises TraceError ("trace too large or complex to
        parse within limits"): the trace's fault. A parser that cannot be started, or that runs
        out of wall time with CPU time to spare (the machine starved it: ParserStarved), raises
        ParserUnavailable: the host's fault, a retry."""
        fd = _open_trace(path, MAX_FILE_BYTES) if isinstance(path, str) else path
        try:
            _check_fd(fd, MAX_FILE_BYTES)
            request = {"names": list(names), "platform": platform, "expected": expected, "cpu_s": self.cpu_s}
            try:
                reply, wall = self._ask(fd, request)
            except _Failed as failed:
                if not failed.reused:
                    raise failed.error from None
                # a limit in a process that had served before: a fresh process's answer stands
                try:
                    reply, wall = self._ask(fd, request)
                except _Failed as again:
                    raise again.error from None
        finally:
            if isinstance(path, str):
                os.close(fd)
        return _summary(reply, wall)

    def _ask(self, fd: int, request: dict[str, Any]) -> tuple[dict[str, Any], float]:
        if self._proc is None:
            self._start()
        assert self._proc is not None and self._sock is not None
        reused = self._served > 0
        proc, sock = self._proc, self._sock
        used0 = _cpu_of(proc.pid) or 0.0
        t = time.monotonic()
        try:
            socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [fd])
            line = self._read_line(sock, t + self.wall_s)
        except TimeoutError:
            used = _cpu_of(proc.pid)
            self._discard()
            # RLIMIT_CPU ends a parser that does too much work, whatever the load; one that
            # runs out of wall time short of it was starved by the machine, not by the trace
            if used is not None and used - used0 < self.cpu_s * 0.9:
                raise ParserStarved(
                    f"the trace parser got {used - used0:.1f} s of CPU in {self.wall_s:g} s of wall time: "
                    "the machine is too busy to parse the trace"
                ) from None
            raise _Failed(TraceError(f"{_LIMIT_MESSAGE} (the parser ran past {self.wall_s:g} s)"), reused) from None
        except OSError:
            line = b""
        wall = time.monotonic() - t
        try:
            reply = json.loads(line.decode("utf-8", "replace")) if line else None
            if not isinstance(reply, dict):
                raise ValueError
        except ValueError:
            reply = None
        if reply is None or reply.get("kind") == "limits":
            code, tail = self._discard()
            if reply is not None:  # it answered; its end is ours (killed), not news
                detail = str(reply.get("error"))
            else:
                how = "no answer" if code is None else f"signal {-code}" if code < 0 else f"exit status {code}"
                detail = how + (f": {tail}" if tail else "")
            raise _Failed(TraceError(f"{_LIMIT_MESSAGE} (the parser: {detail})"), reused)
        self._served += 1
        return reply, wall

    @staticmethod
    def _read_line(sock: socket.socket, deadline: float) -> bytes:
        """One reply line, by ``deadline`` (TimeoutError past it); b"" when the process ended."""
        buf = bytearray()
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise TimeoutError
            chunk = sock.recv(1 << 20)
            if not chunk:
                return b""
            buf += chunk
            if len(buf) > _MAX_REPLY:
                return b""
        return bytes(buf)


def _cpu_of(pid: int) -> float | None:
    from ..sandbox import proc_stat  # deferred: only past a wall limit or at a request's start

    return proc_stat.cpu_seconds(pid)


def _summary(reply: dict[str, Any], wall: float) -> TraceSummary:
    parser = dict(reply.get("parser") or {}, wall_s=round(wall, 6))
    if "error" in reply:
        err = TraceError(str(reply["error"]))
        err.parser = parser
        raise err
    programs: dict = {}
    for name, got in (reply.get("programs") or {}).items():
        if "error" in got:
            programs[name] = TraceError(got["error"])
        else:
            programs[name] = Executions(got["durations_s"], got["starts_ps"], got["method"], got["plane"])
    window = reply.get("window_ns")
    return TraceSummary(programs, int(reply["n_events"]), tuple(window) if window else None, parser)
