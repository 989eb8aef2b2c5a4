"""Agent trajectories as frameworks write them: Harbor's ATIF and Google ADK sessions, read
natively beside ``jaxbench-trace/1`` (pure, no Django).

An upload is sniffed (:func:`open_upload`): a ``jaxbench-trace/1`` JSON Lines trace goes on to
:func:`jaxbench.traces.parse_trace` line by line, as before; a single JSON document is an ATIF
trajectory (``schema_version`` starting with ``"ATIF"``: :mod:`.atif`) or an ADK session (an
``events`` list whose events have an ``author``: :mod:`.adk`). Either is validated against its
published schema (every error names the JSON path), then turned into the same
:class:`~jaxbench.traces.Trace` (a header and samples) a ``jaxbench-trace/1`` file gives, so
the portal stores it through the one intake path.

**Which kernels a trajectory produced** (:func:`find_kernels`), in the order of its steps:

1. *Tool calls that write a kernel file.* A tool call (ATIF ``tool_calls[]``, ADK
   ``function_call`` parts of a non-user event) whose arguments hold the whole source in one
   of :data:`CODE_ARGUMENTS` (``content``, ``code``, ``file_text``, ...), a source with a
   module-level ``def workload(``. When the call also names a file (one of
   :data:`PATH_ARGUMENTS`: ``path``, ``file_path``, ...), the file must end in ``.py``
   (a note or a test file that quotes a kernel is not one). The function's name does not
   matter (``write_file``, ``create``, ``submit_kernel`` all count); partial edits (a diff, an
   ``old_str``/``new_str`` replacement) and shell commands are not kernels, since their
   source is not whole in the call.
2. *Only when no tool call wrote a kernel*: fenced python blocks (```` ```python ````) in the
   agent's own messages (ATIF ``source: "agent"`` steps; ADK non-user events, thoughts
   excluded) holding both a module-level ``def workload(`` and a ``pallas_call``.

**Which workload** a kernel is for, first that applies: the call's ``workload`` argument; its
file path, any component of which is a workload name (``12p.py``,
``runs/12p_RMSNorm/optimized.py``; the file's own name first); the trajectory's declared
workload (ATIF ``extra.jaxbench.workload``, ADK ``state.jaxbench.workload``); the upload's
``workload`` parameter. A kernel whose workload is none of these is an error.

Each kernel becomes one sample, numbered per workload 0, 1, ... in trajectory order, with the
step's time, where it came from (``step_ref``), and the agent's self-reported usage: the
tokens and cost of every step up to and including this one (cumulative) and, as
``jaxbench-trace/1``'s ``tokens_in``/``tokens_out``/``cost_usd``, what was spent since the
previous kernel. A trajectory is a search, every kernel of it is scored: ``sampling`` is
``"sequential"``, ``selection`` ``"pass_at_k"``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jaxbench.limits import MAX_LINE_BYTES, MAX_SAMPLES, MAX_TRACE_BYTES

from .catalog import WorkloadCatalog
from .check import Checker
from .fields import FORMAT, MAX_ERRORS, TraceError
from .parse import Trace
from .validate import validate_header, validate_sample

ATIF = "atif"
ADK = "adk"
JSONL = "jsonl"

# the argument that holds a written file's whole source, and the one that names the file
CODE_ARGUMENTS = ("content", "contents", "code", "file_text", "source", "text", "new_content")
PATH_ARGUMENTS = ("path", "file_path", "filepath", "filename", "file_name", "file", "target_file")
# what the portal reads from a trajectory's own metadata (ATIF extra.jaxbench, ADK state.jaxbench)
METADATA_KEYS = ("workload", "hardware", "method", "model", "description", "link")
# what an upload may say beside a trajectory (form fields, API parameters)
UPLOAD_OPTIONS = ("hardware", "workload", "method", "model")

_WORKLOAD_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+workload[ \t]*\(", re.MULTILINE)
_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


def defines_workload(code: str) -> bool:
    return bool(_WORKLOAD_DEF.search(code))


# -- the normalized trajectory ---------------------------------------------------------------


@dataclasses.dataclass
class ToolCall:
    path: str  # JSON path of the call, e.g. "steps[3].tool_calls[0]"
    call_id: str | None
    name: str
    arguments: dict[str, Any]


@dataclasses.dataclass
class Turn:
    """One step (ATIF) or event (ADK): when, what it cost, what the agent did in it."""

    path: str  # "steps[3]" / "events[7]"
    ref: str  # for people: "step 4" / "event e-7"
    at: dt.datetime | None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    tool_calls: list[ToolCall] = dataclasses.field(default_factory=list)
    agent_texts: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (path, text)


@dataclasses.dataclass
class Document:
    """What a format parser hands over: the turns in order and the trajectory's metadata."""

    format: str  # ATIF / ADK
    version: str  # "ATIF-v1.4", "ADK session"
    method: str  # the default method (the agent's or app's name)
    model: str
    framework: str
    session_id: str
    declared: dict[str, str]  # the trajectory's own jaxbench metadata
    declared_path: str  # where it is: "extra.jaxbench" / "state.jaxbench"
    turns: list[Turn]
    totals: dict[str, Any]  # the document's own totals (ATIF final_metrics), as given


@dataclasses.dataclass
class Kernel:
    code: str
    workload: str  # the workload ID
    path: str
    ref: str
    at: dt.datetime | None
    cum_tokens_in: int | None
    cum_tokens_out: int | None
    cum_cost_usd: float | None


# -- reading the upload ----------------------------------------------------------------------


class _Prepended:
    """A stream whose first lines were already read (to sniff the format): gives them back, then
    the rest, with the same ``readline(limit)`` the JSON Lines parser relies on."""

    def __init__(self, head: list[bytes], readline: Callable[[int], bytes]):
        self.head = head
        self._readline = readline

    def readline(self, limit: int = -1) -> bytes:
        if self.head:
            return self.head.pop(0)
        return self._readline(limit)


def _readline_of(stream: Any) -> Callable[[int], bytes]:
    readline = getattr(stream, "readline", None)
    if readline is not None:

        def read(limit: int) -> bytes:
            chunk = readline(limit)
            return chunk.encode() if isinstance(chunk, str) else chunk

        return read
    it = iter(stream)

    def next_line(_limit: int) -> bytes:
        chunk = next(it, b"")
        return chunk.encode() if isinstance(chunk, str) else chunk

    return next_line


def open_upload(stream: Any, max_bytes: int = MAX_TRACE_BYTES, document: bool = False) -> tuple[str, Any]:
    """Sniff an upload: ``("jsonl", stream)`` for a ``jaxbench-trace/1`` trace (a stream giving
    the same lines, still to be parsed line by line), or ``("json", bytes)`` for one JSON
    document (an ATIF trajectory or ADK session: read whole, at most ``max_bytes``, else
    ``("too_large", None)``).

    The first non-blank line decides: a complete ATIF or ADK document on one line (:func:`detect`),
    or the opening of a multi-line document (``{`` or ``[``, not valid JSON on its own and not
    naming ``format``), is a JSON document; anything else (a trace's header, ...) goes to the
    JSON Lines parser, which says what is wrong, as it always did. ``document``: the sender
    said it is one JSON document (``Content-Type: application/json``): read it as one."""
    readline = _readline_of(stream)
    head: list[bytes] = []
    first = b""
    total = 0
    while True:
        chunk = readline(MAX_LINE_BYTES + 1)
        if not chunk:
            break
        head.append(chunk)
        total += len(chunk)
        if chunk.strip() and chunk.strip() != b"\xef\xbb\xbf":
            first = chunk
            break
        if total > 1024 * 1024:  # a megabyte of blank lines: let the line parser say so
            break
    probe = first.removeprefix(b"\xef\xbb\xbf") if not b"".join(head[:-1]).strip() else first
    is_document = document
    if probe and len(probe) <= MAX_LINE_BYTES and not document:
        try:
            obj = json.loads(probe)
        except (ValueError, RecursionError):
            stripped = probe.lstrip()
            is_document = stripped[:1] in (b"{", b"[") and b'"format"' not in probe
        else:
            is_document = detect(obj) is not None  # a one-line ATIF or ADK document
    if not is_document:
        return JSONL, _Prepended(head, readline)
    data = b"".join(head)
    while len(data) <= max_bytes:
        chunk = readline(1024 * 1024)
        if not chunk:
            return "json", data
        data += chunk
    return "too_large", None


# -- the metadata the portal reads -----------------------------------------------------------


def check_declared(value: object, path: str, check: Checker) -> dict[str, str]:
    """The trajectory's ``jaxbench`` object: string fields of :data:`METADATA_KEYS`."""
    if value is None:
        return {}
    spec = {k: ((("string", "null")), False) for k in METADATA_KEYS}
    obj = check.obj(value, path, spec, forbid_extra=True, what="the jaxbench metadata")
    if obj is None:
        return {}
    return {k: v for k, v in obj.items() if isinstance(v, str) and v.strip()}


def parse_timestamp(value: str, path: str, check: Checker) -> dt.datetime | None:
    """An ISO 8601 time (``Z`` or an offset; a time without one is UTC)."""
    try:
        t = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        check.add(path, f"not an ISO 8601 timestamp: {value[:60]!r}")
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def epoch_timestamp(value: float, path: str, check: Checker) -> dt.datetime | None:
    try:
        return dt.datetime.fromtimestamp(float(value), tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        check.add(path, f"not a time in seconds since 1970: {value!r}")
        return None


# -- the kernel rule -------------------------------------------------------------------------


def _code_argument(args: Mapping[str, Any]) -> str | None:
    for key in CODE_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and defines_workload(value):
            return value
    return None


def _path_argument(args: Mapping[str, Any]) -> str | None:
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def workload_of_path(path: str, catalog: WorkloadCatalog) -> str | None:
    """The workload a file path names: its file name first, then its folders, innermost first."""
    parts = [p for p in posixpath.normpath(path.replace("\\", "/")).split("/") if p not in ("", ".", "..")]
    for part in reversed(parts):
        wid = catalog.resolve(part)
        if wid is not None:
            return wid
    return None


def find_kernels(doc: Document, catalog: WorkloadCatalog, default_workload: str | None, check: Checker) -> list[Kernel]:
    """The kernels of ``doc`` by the rule of this module's docstring, with their cumulative usage."""
    default_wid = None
    if default_workload:
        default_wid = catalog.resolve(default_workload)
    found: list[tuple[Turn, str, str, str | None]] = []  # (turn, path, code, workload id or None)
    for turn in doc.turns:
        for call in turn.tool_calls:
            code = _code_argument(call.arguments)
            if code is None:
                continue
            file = _path_argument(call.arguments)
            if file is not None and not file.lower().endswith(".py"):
                continue
            named = call.arguments.get("workload")
            if isinstance(named, str) and named.strip():
                wid = catalog.resolve(named)
                if wid is None:
                    check.add(f"{call.path}.arguments.workload", f"unknown workload {named[:80]!r}: {catalog.hint()}")
                    continue
            elif file is not None and (wid := workload_of_path(file, catalog)) is not None:
                pass
            else:
                wid = default_wid
            if wid is None:
                where = f"the file {file[:120]!r} names no workload" if file else "the call names no workload"
                check.add(
                    call.path,
                    f"a kernel (def workload) written by {call.name!r}, but {where}: give the call a "
                    "'workload' argument, write it to a path such as 12p.py or 12p_RMSNorm/kernel.py, "
                    f"declare the trajectory's workload ({doc.declared_path}.workload) or upload it with "
                    "the 'workload' parameter",
                )
                continue
            found.append((turn, call.path, code, wid))
    if not found and not check.errors:
        for turn in doc.turns:
            for path, text in turn.agent_texts:
                for block in _FENCE.findall(text):
                    if defines_workload(block) and "pallas_call" in block:
                        found.append((turn, path, block, default_wid))
        if found and default_wid is None:
            check.add(
                found[0][1],
                f"{len(found)} kernel(s) in fenced python blocks of the agent's messages, but no "
                f"workload for them: declare it ({doc.declared_path}.workload) or upload the "
                "trajectory with the 'workload' parameter",
            )
            return []
    if not found and not check.errors:
        check.add(
            "",
            "no kernel found in the trajectory: a kernel is a tool call whose arguments hold a "
            f"whole source with a module-level 'def workload(' (in one of {', '.join(CODE_ARGUMENTS)}; "
            "a file path, if given, ends in .py), or, when no tool call writes one, a fenced python "
            "block of the agent's own message with 'def workload(' and a pallas_call "
            "(see /docs/trace-format/#trajectories)",
        )
    kernels: list[Kernel] = []
    totals: dict[str, Any] = {"in": None, "out": None, "cost": None}
    turns_done: set[int] = set()

    def add(key: str, value: float | None) -> None:
        if value is not None:
            totals[key] = (totals[key] or 0) + value

    order = {id(t): i for i, t in enumerate(doc.turns)}
    next_turn = 0
    for turn, path, code, wid in found:
        # fold the usage of every turn up to and including this kernel's
        while next_turn <= order[id(turn)]:
            t = doc.turns[next_turn]
            if next_turn not in turns_done:
                add("in", t.tokens_in)
                add("out", t.tokens_out)
                add("cost", t.cost_usd)
                turns_done.add(next_turn)
            next_turn += 1
        assert wid is not None
        kernels.append(
            Kernel(
                code=code,
                workload=wid,
                path=path,
                ref=turn.ref,
                at=turn.at,
                cum_tokens_in=totals["in"],
                cum_tokens_out=totals["out"],
                cum_cost_usd=None if totals["cost"] is None else round(totals["cost"], 10),
            )
        )
    return kernels


def _delta(now: float | None, before: float | None) -> float | None:
    if now is None:
        return None
    return round(now - (before or 0), 10)  # sums of floats: no 0.031999999999999994


# -- the trace a trajectory becomes ----------------------------------------------------------


def to_trace(
    doc: Document,
    catalog: WorkloadCatalog,
    hardware: Iterable[str] | None,
    options: Mapping[str, str | None],
    check: Checker,
) -> Trace | None:
    """The header and samples of ``doc``; None when ``check`` holds errors."""
    opts = {k: (v.strip() if isinstance(v, str) and v.strip() else None) for k, v in options.items()}
    declared = doc.declared
    default_workload = opts.get("workload") or declared.get("workload")
    if default_workload and catalog.resolve(default_workload) is None:
        field = "workload" if opts.get("workload") else f"{doc.declared_path}.workload"
        check.add(field, f"unknown workload {default_workload[:80]!r}: {catalog.hint()}")
        return None
    hw = opts.get("hardware") or declared.get("hardware")
    header_in: dict[str, Any] = {
        "format": FORMAT,
        "method": opts.get("method") or declared.get("method") or doc.method,
        "model": opts.get("model") or declared.get("model") or doc.model or "unknown",
        "framework": doc.framework[:200] or None,
        "hardware": hw,
        "sampling": "sequential",
        "selection": "pass_at_k",
        "description": declared.get("description"),
        "link": declared.get("link"),
    }
    if hw is None:
        del header_in["hardware"]
    header, errs = validate_header({k: v for k, v in header_in.items() if v is not None or k == "hardware"}, None)
    for e in errs:
        name = e["field"]
        if name == "hardware" and hw is None:
            check.add(
                "hardware",
                f"name the hardware target: the upload's 'hardware' parameter or {doc.declared_path}.hardware",
            )
        elif name in ("hardware", "method", "model") and opts.get(name):
            check.add(name, e["message"])
        elif name in ("description", "link", "hardware", "method", "model"):
            check.add(f"{doc.declared_path}.{name}", e["message"])
        else:
            check.add(name or "", e["message"])
    known_hw = set(hardware) if hardware is not None else None
    if not errs and known_hw is not None and header["hardware"] not in known_hw:
        field = "hardware" if opts.get("hardware") else f"{doc.declared_path}.hardware"
        check.add(field, f"unknown hardware target {header['hardware']!r}; known: {', '.join(sorted(known_hw))}")
    kernels = find_kernels(doc, catalog, default_workload, check)
    if check.errors:
        return None
    if len(kernels) > MAX_SAMPLES:
        check.add("", f"more than {MAX_SAMPLES} kernels in one trajectory")
        return None
    samples: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    prev: Kernel | None = None
    for k in kernels:
        index = counts.get(k.workload, 0)
        counts[k.workload] = index + 1
        d_in = _delta(k.cum_tokens_in, prev.cum_tokens_in if prev else None)
        d_out = _delta(k.cum_tokens_out, prev.cum_tokens_out if prev else None)
        d_cost = _delta(k.cum_cost_usd, prev.cum_cost_usd if prev else None)
        raw = {
            "workload": k.workload,
            "index": index,
            "code": k.code,
            "tokens_in": None if d_in is None else int(d_in),
            "tokens_out": None if d_out is None else int(d_out),
            # a float sum minus a float sum may dip just below 0
            "cost_usd": None if d_cost is None else max(0.0, d_cost),
        }
        clean, errs = validate_sample(raw, None)
        for e in errs:
            check.add(f"{k.path} (kernel {k.workload}#{index})", f"{e['field']}: {e['message']}")
        if errs:
            continue
        clean.update(
            line=None,
            workload_id=k.workload,
            step_ref=f"{k.ref} ({k.path})"[:200],
            step_at=k.at,
            cum_tokens_in=k.cum_tokens_in,
            cum_tokens_out=k.cum_tokens_out,
            cum_cost_usd=k.cum_cost_usd,
        )
        samples.append(clean)
        prev = k
    if check.errors:
        return None
    last = kernels[-1] if kernels else None
    header["settings"] = {
        "trajectory": {
            "format": doc.version,
            "session_id": doc.session_id[:200],
            "turns": len(doc.turns),
            "kernels": len(kernels),
            "tokens_in_to_last_kernel": last.cum_tokens_in if last else None,
            "tokens_out_to_last_kernel": last.cum_tokens_out if last else None,
            "cost_usd_to_last_kernel": last.cum_cost_usd if last else None,
            "reported_totals": doc.totals,
        }
    }
    return Trace(header=header, samples=samples, lines=0)


def parse_trajectory(
    data: bytes,
    catalog: WorkloadCatalog | None = None,
    hardware: Iterable[str] | None = None,
    options: Mapping[str, str | None] | None = None,
) -> Trace:
    """Parse and validate an ATIF trajectory or ADK session (one JSON document) into a
    :class:`Trace`; raise :class:`TraceError` with every problem found, each naming its JSON path."""
    from . import adk, atif  # the formats use this module's types

    catalog = catalog or WorkloadCatalog.offline()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceError([{"line": None, "field": None, "message": f"not UTF-8 (byte {exc.start + 1})"}]) from None
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise TraceError([{"line": None, "field": None, "message": "not valid JSON: nested too deeply"}]) from None
    except json.JSONDecodeError as exc:
        raise TraceError(
            [{"line": exc.lineno, "field": None, "message": f"not valid JSON: {exc.msg} at column {exc.colno}"}]
        ) from None
    except ValueError as exc:
        raise TraceError([{"line": None, "field": None, "message": f"not valid JSON: {exc}"}]) from None
    kind = detect(obj)
    check = Checker(MAX_ERRORS)
    if kind == ATIF:
        doc = atif.read(obj, check)
    elif kind == ADK:
        doc = adk.read(obj, check)
    else:
        raise TraceError(
            [
                {
                    "line": None,
                    "field": None,
                    "message": "not a trace this portal reads: expected a jaxbench-trace/1 JSON Lines "
                    'file (first line {"format": "jaxbench-trace/1", ...}), an ATIF trajectory '
                    '({"schema_version": "ATIF-v1.x", "steps": [...]}) or an ADK session '
                    '({"id": ..., "app_name": ..., "events": [{"author": ...}]})',
                }
            ]
        )
    trace = None if check.errors else to_trace(doc, catalog, hardware, options or {}, check)
    if check.errors or trace is None:
        raise TraceError(check.errors or [{"line": None, "field": None, "message": "invalid trajectory"}])
    return trace


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use null)")


def detect(obj: object) -> str | None:
    """ATIF (``schema_version`` starting with "ATIF"), ADK (an ``events`` list of objects with
    an ``author``, or an empty one beside an app name), or None."""
    if not isinstance(obj, dict):
        return None
    version = obj.get("schema_version")
    if isinstance(version, str) and version.upper().startswith("ATIF"):
        return ATIF
    events = obj.get("events")
    if isinstance(events, list):
        if any(isinstance(e, dict) and "author" in e for e in events[:50]):
            return ADK
        if not events and ("app_name" in obj or "appName" in obj):
            return ADK
    return None
