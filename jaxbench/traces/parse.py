"""Streaming: a trace read line by line with caps, every error naming its line, and the
cross-line rules (one header, indices 0..n-1, parents, the budget)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

from jaxbench.limits import MAX_LINE_BYTES, MAX_SAMPLES, MAX_TRACE_BYTES

from .catalog import WorkloadCatalog
from .fields import FORMAT, MAX_ERRORS, ONE_SAMPLE_SELECTIONS, ErrorItem, TraceError
from .validate import validate_header, validate_sample

# -- streaming ------------------------------------------------------------------------------


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON (use null)")


def _decode(raw: bytes | str, line: int) -> tuple[Any, ErrorItem | None]:
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, {"line": line, "field": None, "message": f"not UTF-8 (byte {exc.start + 1} of the line)"}
    # without its line break: json would place an error at the end of the text on "line 2,
    # column 1" of the one line, after the break, instead of where the line stops
    text = raw.rstrip("\r\n")
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except RecursionError:
        return None, {"line": line, "field": None, "message": "not valid JSON: nested too deeply"}
    except json.JSONDecodeError as exc:
        msg = exc.msg.removesuffix(" at")  # "Unterminated string starting at" + " at column N"
        if exc.pos >= len(text) or exc.msg.startswith("Unterminated string"):
            # a line cut short: say where it stops (and where an unclosed string began)
            where = f" ({msg} at column {exc.colno})" if exc.pos < len(text) else ""
            message = f"not valid JSON: the line ends at column {len(text)} before its value is complete{where}"
        else:
            message = f"not valid JSON: {msg} at column {exc.colno}"
        return None, {"line": line, "field": None, "message": message}
    except ValueError as exc:  # _reject_constant's NaN/Infinity
        return None, {"line": line, "field": None, "message": f"not valid JSON: {exc}"}


def iter_lines(
    stream: Iterable[bytes] | Iterable[str], max_line: int = MAX_LINE_BYTES, max_total: int = MAX_TRACE_BYTES
) -> Iterator[tuple[int, bytes | str | None, ErrorItem | None]]:
    """Yield ``(line_number, raw_line, error)`` from a binary or text stream (anything with
    ``readline(limit)``) or an iterable of lines, never holding more than one line."""
    # the stream's readline (bytes or str), else the iterable's next line (b"" at its end)
    readline: Callable[[int], Any] | None = getattr(stream, "readline", None)
    if readline is None:
        it: Iterator[bytes | str] = iter(stream)

        def readline(_limit: int, _it: Iterator[bytes | str] = it) -> bytes | str:
            return next(_it, b"")

    number = total = 0
    while True:
        chunk: Any = readline(max_line + 1)  # bytes or str: each check below matches its type
        if not chunk:
            return
        number += 1
        total += len(chunk)
        if total > max_total:
            yield (
                number,
                None,
                {"line": number, "field": None, "message": f"the trace is larger than {max_total // (1024 * 1024)} MB"},
            )
            return
        newline = b"\n" if isinstance(chunk, bytes) else "\n"
        if len(chunk) > max_line and not chunk.endswith(newline):
            # Skip the rest of the overlong line without keeping it.
            while chunk and not chunk.endswith(newline):
                chunk = readline(1024 * 1024)
                total += len(chunk)
                if total > max_total:
                    break
            yield (
                number,
                None,
                {"line": number, "field": None, "message": f"line longer than {max_line // (1024 * 1024)} MB"},
            )
            continue
        if number == 1:
            bom = b"\xef\xbb\xbf" if isinstance(chunk, bytes) else "\ufeff"
            if chunk.startswith(bom):
                chunk = chunk[len(bom) :]
        yield number, chunk, None


@dataclasses.dataclass
class Trace:
    header: dict[str, Any]
    samples: list[dict[str, Any]]  # clean sample dicts, each with "line" and "workload_id"
    lines: int
    # set only by the client's check (``client.commands.check_trace``): what the trace was checked
    # against, and how long the check took; unset (AttributeError) otherwise
    how: str = dataclasses.field(init=False, repr=False, compare=False)
    seconds: float = dataclasses.field(init=False, repr=False, compare=False)
    # read from one JSON document (an ATIF trajectory or ADK session), not JSON Lines
    document: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)

    def workloads(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.samples:
            counts[s["workload_id"]] = counts.get(s["workload_id"], 0) + 1
        return counts


class _Errors(list[ErrorItem]):
    """A list of errors that stops the parse once it holds MAX_ERRORS."""

    class Full(Exception):
        pass

    def add(self, e: ErrorItem) -> None:
        self.append(e)
        if len(self) >= MAX_ERRORS:
            raise self.Full


def parse_trace(
    stream: Iterable[bytes] | Iterable[str],
    catalog: WorkloadCatalog | None = None,
    hardware: Iterable[str] | None = None,
    max_samples: int = MAX_SAMPLES,
) -> Trace:
    """Parse and validate a whole trace from ``stream``; raise :class:`TraceError` with every
    problem found (up to MAX_ERRORS), each naming its line and field.

    ``catalog`` resolves workload names (default: offline, ID syntax only); ``hardware`` is the
    set of known hardware slugs (default: not checked)."""
    catalog = catalog or WorkloadCatalog.offline()
    known_hw = set(hardware) if hardware is not None else None
    errors = _Errors()
    header: dict[str, Any] | None = None
    header_ok = False
    samples: list[dict[str, Any]] = []
    seen: dict[str, dict[int, int]] = {}  # workload id -> {index: line}
    last_line = 0
    try:
        for number, raw, err in iter_lines(stream):
            last_line = number
            if err:
                errors.add(err)
                if header is None:
                    header = {}
                continue
            assert raw is not None  # None only with an error
            if not raw.strip():
                continue
            obj, err = _decode(raw, number)
            if err:
                errors.add(err)
                if header is None:
                    header = {}
                continue
            if header is None:
                if isinstance(obj, dict) and "format" not in obj and "workload" in obj:
                    errors.add(
                        {
                            "line": number,
                            "field": "format",
                            "message": f'the first line must be the header {{"format": "{FORMAT}", "method": ..., '
                            f'"model": ..., "hardware": ..., "sampling": ...}}, not a sample',
                        }
                    )
                    header = {}
                    continue
                header, errs = validate_header(obj, number)
                for e in errs:
                    errors.add(e)
                if any(e["field"] == "format" for e in errs):
                    break  # another format or version: its lines may mean something else
                header_ok = not errs
                if known_hw is not None and "hardware" in header and header["hardware"] not in known_hw:
                    errors.add(
                        {
                            "line": number,
                            "field": "hardware",
                            "message": f"unknown hardware target {header['hardware']!r}; known: "
                            f"{', '.join(sorted(known_hw))}",
                        }
                    )
                continue
            if isinstance(obj, dict) and "format" in obj:
                errors.add(
                    {"line": number, "field": "format", "message": "a second header: only the first line is a header"}
                )
                continue
            clean, errs = validate_sample(obj, number)
            if errs:
                for e in errs:
                    errors.add(e)
                continue
            wid = catalog.resolve(clean["workload"])
            if wid is None:
                errors.add(
                    {
                        "line": number,
                        "field": "workload",
                        "message": f"unknown workload {clean['workload'][:80]!r}: {catalog.hint()}",
                    }
                )
                continue
            indices = seen.setdefault(wid, {})
            if clean["index"] in indices:
                errors.add(
                    {
                        "line": number,
                        "field": "index",
                        "message": f"duplicate index {clean['index']} of workload {wid} (first on line "
                        f"{indices[clean['index']]}); indices must be 0..n-1 without gaps "
                        f"or duplicates",
                    }
                )
                continue
            indices[clean["index"]] = number
            if len(samples) >= max_samples:
                errors.add({"line": number, "field": None, "message": f"more than {max_samples} samples in one trace"})
                break
            clean["line"] = number
            clean["workload_id"] = wid
            samples.append(clean)
        if header is None:
            errors.add(
                {
                    "line": max(last_line, 1),
                    "field": "format",
                    "message": f'the trace is empty: the first line must be the header {{"format": "{FORMAT}", ...}}',
                }
            )
        elif not samples and not errors:
            errors.add({"line": last_line, "field": "workload", "message": "the trace has a header but no samples"})
        if not errors:
            assert header is not None  # else an error was added above
            budget = header.get("budget") if header_ok else None
            for wid, indices in seen.items():
                n = len(indices)
                if max(indices) != n - 1:
                    missing = sorted(set(range(max(indices) + 1)) - set(indices))
                    after = min(i for i in indices if i > missing[0])
                    shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
                    errors.add(
                        {
                            "line": indices[after],
                            "field": "index",
                            "message": f"workload {wid}: sample indices must be 0..n-1 without gaps "
                            f"(fast@N reads them in order); missing {shown}",
                        }
                    )
                selection = header.get("selection") if header_ok else None
                if selection in ONE_SAMPLE_SELECTIONS and n > 1:
                    errors.add(
                        {
                            "line": indices[1],
                            "field": "selection",
                            "message": f"workload {wid} has {n} samples, but the header declares {selection!r}: one "
                            'sample per workload (the one chosen); a trace with every sample is "pass_at_k"',
                        }
                    )
                if budget is not None and n > budget:
                    errors.add(
                        {
                            "line": indices.get(budget, max(indices.values())),
                            "field": "index",
                            "message": f"workload {wid} has {n} samples, more than the header's budget of {budget}",
                        }
                    )
    except _Errors.Full:
        errors.append({"line": last_line, "field": None, "message": f"stopped after {MAX_ERRORS} errors"})
    if errors:
        raise TraceError(list(errors))
    assert header is not None  # else an error was added above
    return Trace(header=header, samples=samples, lines=last_line)
