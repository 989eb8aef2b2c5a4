"""The trace parser's own process (trusted code, hostile input): started by
:class:`jaxbench.profiling.parser_process.TraceParser` with ``python -I``, it limits its
address space and file writes, imports numpy and the reader under those limits, then serves
requests on a Unix socket until the socket closes: each request is one JSON line with the
trace's descriptor beside it (``SCM_RIGHTS``), the program names, the platform, the expected
count and its CPU allowance; each reply one JSON line: the selected programs, or
``{"error": ..., "kind": "trace"}`` for a trace the reader refuses, ``{"error": ..., "kind":
"limits"}`` for one that ran it out of memory and ``"kind": "parser"`` for any other failure of
the reader. Running out of its CPU allowance kills it (SIGXCPU)."""

from __future__ import annotations

import json
import os
import resource
import socket
import time


def _limit(what: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    old_soft, old_hard = resource.getrlimit(what)
    if old_hard != resource.RLIM_INFINITY:
        hard = min(hard, old_hard)
        soft = min(soft, hard)
    resource.setrlimit(what, (soft, hard))


def _status(field: bytes) -> int | None:
    """A size from /proc/self/status, in bytes: VmHWM (the peak resident set: unlike
    ru_maxrss, not inherited across exec), VmPeak (the peak address space)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(field + b":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _load():
    """The reader, imported under the limits: the module, or the error every request gets."""
    try:
        from jaxbench.profiling import xplane  # numpy: loaded under the limits

        return xplane
    except (ImportError, MemoryError, OSError) as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()] or [""]
        cause = next((ln for ln in lines if ln.startswith("Original error")), lines[0])[:200]  # numpy's
        return {"error": f"the reader did not load within the limits ({type(exc).__name__}: {cause})", "kind": "limits"}


def _parse(xplane, fd: int, request: dict) -> dict:
    if isinstance(xplane, dict):
        return dict(xplane)
    try:
        return xplane.summarize_fd(fd, list(request["names"]), str(request["platform"]), request.get("expected"))
    except xplane.TraceError as exc:
        return {"error": str(exc), "kind": "trace"}
    except MemoryError as exc:
        return {"error": f"out of memory ({exc})" if str(exc) else "out of memory", "kind": "limits"}
    except Exception as exc:  # noqa: BLE001 - the reader's own failure, said as such
        return {"error": f"the trace parser failed ({type(exc).__name__}: {str(exc)[:300]})", "kind": "parser"}


def _request(sock: socket.socket) -> tuple[dict, list[int]] | None:
    """The next request line and the descriptors sent with it; None at the socket's end."""
    buf, fds = b"", []
    while not buf.endswith(b"\n"):
        data, got, _, _ = socket.recv_fds(sock, 1 << 16, 4)
        fds += got
        if not data:
            for fd in fds:
                os.close(fd)
            return None
        buf += data
    return json.loads(buf), fds


def serve(sock_fd: int, mem_bytes: int) -> None:
    _limit(resource.RLIMIT_AS, int(mem_bytes))
    _limit(resource.RLIMIT_FSIZE, 0)
    _limit(resource.RLIMIT_CORE, 0)
    xplane = _load()
    sock = socket.socket(fileno=sock_fd)
    while True:
        got = _request(sock)
        if got is None:
            return
        request, fds = got
        t0, cpu0 = time.monotonic(), _cpu()
        # this request's CPU allowance on top of what the process used so far (whole seconds:
        # the limit's unit; a fresh process's allowance counts its start, as before)
        _limit(resource.RLIMIT_CPU, int(cpu0) + int(request["cpu_s"]), resource.RLIM_INFINITY)
        try:
            reply = _parse(xplane, fds[0], request) if len(fds) == 1 else {"error": "no trace sent", "kind": "parser"}
        finally:
            for fd in fds:
                os.close(fd)
        reply["parser"] = {
            "cpu_s": round(_cpu() - cpu0, 6),
            "peak_rss_bytes": _status(b"VmHWM"),
            "peak_vm_bytes": _status(b"VmPeak"),
            "in_process_s": round(time.monotonic() - t0, 6),
        }
        sock.sendall(json.dumps(reply).encode() + b"\n")
