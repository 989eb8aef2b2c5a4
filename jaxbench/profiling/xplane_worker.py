"""The trace parser's own process (trusted code, hostile input): started by
:func:`jaxbench.profiling.xplane.parse_in_subprocess` with ``python -I``, it reads one JSON
request on stdin (the trace's inherited descriptor, the program names, the platform, the
expected count and its limits), limits itself before importing numpy or touching the trace, and
writes one JSON reply on stdout: the selected programs, or ``{"error": ..., "kind": "trace"}``
for a trace the reader refuses, ``{"error": ..., "kind": "limits"}`` for one that ran it
out of memory and ``"kind": "parser"`` for any other failure of the reader. Running out of
CPU time kills it (SIGXCPU, then SIGKILL)."""

from __future__ import annotations

import json
import resource
import sys
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


def _parse(request: dict) -> dict:
    try:
        from jaxbench.profiling import xplane  # numpy: loaded under the limits
    except (ImportError, MemoryError, OSError) as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()] or [""]
        cause = next((ln for ln in lines if ln.startswith("Original error")), lines[0])[:200]  # numpy's
        return {"error": f"the reader did not load within the limits ({type(exc).__name__}: {cause})", "kind": "limits"}
    try:
        return xplane.summarize_fd(
            int(request["fd"]), list(request["names"]), str(request["platform"]), request.get("expected")
        )
    except xplane.TraceError as exc:
        return {"error": str(exc), "kind": "trace"}
    except MemoryError as exc:
        return {"error": f"out of memory ({exc})" if str(exc) else "out of memory", "kind": "limits"}
    except Exception as exc:  # noqa: BLE001 - the reader's own failure, said as such
        return {"error": f"the trace parser failed ({type(exc).__name__}: {str(exc)[:300]})", "kind": "parser"}


def main() -> None:
    t0 = time.monotonic()
    request = json.loads(sys.stdin.buffer.read(1 << 16))
    _limit(resource.RLIMIT_AS, int(request["mem_bytes"]))
    _limit(resource.RLIMIT_CPU, int(request["cpu_s"]), int(request["cpu_s"]) + 1)
    _limit(resource.RLIMIT_FSIZE, 0)
    _limit(resource.RLIMIT_CORE, 0)
    reply = _parse(request)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    reply["parser"] = {
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 6),
        "peak_rss_bytes": _status(b"VmHWM"),
        "peak_vm_bytes": _status(b"VmPeak"),
        "in_process_s": round(time.monotonic() - t0, 6),
    }
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
