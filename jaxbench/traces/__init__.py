"""The agent trace format ``jaxbench-trace/1``: pure parsing and validation, no Django.

A trace is JSON Lines (UTF-8, one JSON object per line):

* line 1, the **header**: ``{"format": "jaxbench-trace/1", "method": ..., "model": ...,
  "hardware": ..., "sampling": "independent" | "sequential", ...}``;
* every further line, one **sample**: ``{"workload": "12p", "index": 0, "code": "...", ...}``.

The portal (``submissions.intake``) and the command-line client (``python -m jaxbench.client
validate-trace``) both validate with this module, and the JSON Schema published at
``/schemas/jaxbench-trace-1.json`` is generated from the same field specifications
(:func:`json_schema`), so the three cannot drift apart.

Rules a JSON Schema of one line cannot express, checked here across lines:

* the first non-blank line is the header, and there is exactly one header;
* the sample indices of each workload are exactly ``0..n-1``: no gaps, no duplicates (fast@N
  reads the samples in index order), in any line order;
* ``parent`` (the sample a sequential search refined) is an earlier index of the same workload;
* no workload has more samples than the header's ``budget``;
* workload names and the hardware target are known to the portal (checked when the caller
  supplies the catalogue; offline, only the workload ID part of a name is checked).

Parsing is streaming: the input is read line by line with a cap on each line, never loaded
whole; every error names its line number and field.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Iterable, Iterator

from jaxbench import record
from jaxbench.limits import (META_LIMITS, MAX_BUDGET, MAX_CODE_CHARS, MAX_LINE_BYTES, MAX_OBJECT_CHARS, MAX_SAMPLES,
                             MAX_TRACE_BYTES)
from jaxbench.workloads import names

FORMAT = "jaxbench-trace/1"
FORMAT_PREFIX = "jaxbench-trace/"
SCHEMA_PATH = "/schemas/jaxbench-trace-1.json"

MAX_ERRORS = 50                           # then parsing stops with a note

SAMPLING = ("independent", "sequential")
# The harness's outcomes (from the Django-free harness library, as the client ships with it) plus
# the failure an agent sees before any code exists: the model's API call failed.
OUTCOMES = (*record.OUTCOMES, "api_error")
HARDWARE_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"
LINK_PATTERN = r"^https?://[^\s]+$"
UPLOAD_KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$"


@dataclasses.dataclass(frozen=True)
class Field:
    """One field of a header or sample line; both the validator and the JSON Schema read it."""

    name: str
    kind: str                      # "string", "integer", "number", "object", "enum", "const"
    description: str
    required: bool = False
    nullable: bool = False
    minimum: float | None = None   # numbers: minimum; strings: minLength
    maximum: float | None = None   # numbers: maximum; strings: maxLength
    choices: tuple = ()
    pattern: str | None = None

    def schema(self) -> dict:
        s: dict[str, Any] = {"description": self.description}
        if self.kind == "const":
            s["const"] = self.choices[0]
        elif self.kind == "enum":
            s["enum"] = list(self.choices) + ([None] if self.nullable else [])
        else:
            s["type"] = [self.kind, "null"] if self.nullable else self.kind
            if self.kind == "string":
                if self.minimum is not None:
                    s["minLength"] = int(self.minimum)
                if self.maximum is not None:
                    s["maxLength"] = int(self.maximum)
                if self.pattern:
                    s["pattern"] = self.pattern
            elif self.kind in ("integer", "number"):
                if self.minimum is not None:
                    s["minimum"] = self.minimum
                if self.maximum is not None:
                    s["maximum"] = self.maximum
        return s


HEADER_FIELDS = (
    Field("format", "const", f'The format and its version, exactly "{FORMAT}".', required=True,
          choices=(FORMAT,)),
    Field("method", "string", "The method: e.g. best-of-N, iterative refinement, Autocomp.",
          required=True, minimum=1, maximum=META_LIMITS["method"]),
    Field("model", "string", "The model that wrote the samples, e.g. Gemini 3 Flash.", required=True,
          minimum=1, maximum=META_LIMITS["model_name"]),
    Field("framework", "string", "The agent framework and its version.", maximum=META_LIMITS["framework"],
          nullable=True),
    Field("hardware", "string", "The hardware target slug to evaluate on, e.g. tpu-v6e or cpu.",
          required=True, pattern=HARDWARE_PATTERN, minimum=1, maximum=40),
    Field("sampling", "enum", '"independent": samples drawn independently (best-of-N); '
          '"sequential": a search, each sample may refine earlier ones.', required=True,
          choices=SAMPLING),
    Field("budget", "integer", "The sampling budget: the most samples per workload.", nullable=True,
          minimum=1, maximum=MAX_BUDGET),
    Field("settings", "object", "Free-form settings (temperature, context, prompts, ...).",
          nullable=True),
    Field("description", "string", "A description shown with the submission.", maximum=META_LIMITS["description"],
          nullable=True),
    Field("link", "string", "A link to a paper, code or write-up (http or https).",
          maximum=META_LIMITS["link"],
          pattern=LINK_PATTERN, nullable=True),
    Field("upload_key", "string", "A client-chosen key, unique per team: uploading again with the "
          "same key returns the first submission instead of creating a duplicate.", minimum=1,
          maximum=META_LIMITS["upload_key"], pattern=UPLOAD_KEY_PATTERN, nullable=True),
)

SAMPLE_FIELDS = (
    Field("workload", "string", "The workload: an ID (12p), a slug (12p-rmsnorm) or the public "
          "suite's folder name (12p_RMSNorm).", required=True, minimum=1, maximum=120),
    Field("index", "integer", "The sample's index within its workload: 0, 1, ... without gaps; "
          "the order in which the samples were produced.", required=True, minimum=0,
          maximum=MAX_SAMPLES),
    Field("round", "integer", "The search round that produced the sample.", nullable=True, minimum=0),
    Field("parent", "integer", "The index of the sample (same workload) this one refines.",
          nullable=True, minimum=0),
    Field("code", "string", "The candidate's Python source (may be empty when the model's API "
          "call failed; it then counts as a failed sample).", required=True, maximum=MAX_CODE_CHARS),
    Field("outcome", "enum", "The agent's own verdict (self-reported; the portal evaluates anyway).",
          nullable=True, choices=OUTCOMES),
    Field("speedup", "number", "The agent's own measured speedup (self-reported).", nullable=True,
          minimum=0),
    Field("speedup_lo", "number", "Optional: the lower end of the agent's own 95% interval of its "
          "speedup (self-reported; with speedup_hi and speedup, speedup_lo <= speedup <= speedup_hi). "
          "The portal's own verdict says faster only when its interval lies above 1.0.",
          nullable=True, minimum=0),
    Field("speedup_hi", "number", "Optional: the upper end of that interval (self-reported).",
          nullable=True, minimum=0),
    Field("tokens_in", "integer", "Prompt tokens spent on this sample.", nullable=True, minimum=0),
    Field("tokens_out", "integer", "Completion tokens spent on this sample.", nullable=True, minimum=0),
    Field("cost_usd", "number", "The API cost of this sample in US dollars.", nullable=True, minimum=0),
)

_HEADER = {f.name: f for f in HEADER_FIELDS}
_SAMPLE = {f.name: f for f in SAMPLE_FIELDS}
_PATTERNS = {f.pattern: re.compile(f.pattern) for f in HEADER_FIELDS + SAMPLE_FIELDS if f.pattern}


class TraceError(ValueError):
    """The trace is invalid; ``errors`` is a list of ``{"line", "field", "message"}``."""

    def __init__(self, errors: list[dict]):
        self.errors = errors
        first = errors[0] if errors else {"line": None, "field": None, "message": "invalid trace"}
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{format_error(first)}{more}")


def format_error(e: dict) -> str:
    where = []
    if e.get("file"):
        where.append(str(e["file"]))
    if e.get("line") is not None:
        where.append(f"line {e['line']}")
    if e.get("field"):
        where.append(f"field {e['field']!r}")
    return (", ".join(where) + ": " if where else "") + str(e.get("message", ""))


# -- workload names ------------------------------------------------------------------------

class WorkloadCatalog:
    """Resolves a workload name to its ID by :func:`jaxbench.workloads.names.resolve` (the one
    rule), over ``entries``: ``(id, slug, public_name)`` triples. Without entries
    (``offline()``) only the ID part is checked: production workloads are 1p-17p, KernelBench
    ones 18k-50k."""

    def __init__(self, entries: Iterable[tuple[str, str, str]] | None):
        self.offline_mode = entries is None
        self._entries = {wid: (slug, public) for wid, slug, public in (entries or ())}
        self._cache: dict[str, str | None] = {}

    @classmethod
    def offline(cls) -> "WorkloadCatalog":
        return cls(None)

    def __len__(self):
        return len(self._entries)

    def resolve(self, name: str) -> str | None:
        if name in self._cache:
            return self._cache[name]
        wid = names.resolve(name, None if self.offline_mode else self._entries)
        if len(self._cache) < 10_000:
            self._cache[name] = wid
        return wid

    def hint(self) -> str:
        return names.HINT


# -- field validation ----------------------------------------------------------------------

def _type_error(f: Field, value) -> str:
    got = "null" if value is None else ("boolean" if isinstance(value, bool) else
                                        type(value).__name__.replace("str", "string")
                                        .replace("dict", "object").replace("list", "array")
                                        .replace("float", "number").replace("int", "integer"))
    want = {"string": "a string", "integer": "an integer", "number": "a number",
            "object": "a JSON object"}.get(f.kind, f.kind)
    return f"must be {want}{' or null' if f.nullable else ''}, not {got}"


def _check_value(f: Field, value):
    """Return ``(clean_value, None)`` or ``(None, message)``."""
    if value is None:
        if f.nullable:
            return None, None
        if f.kind == "const":
            return None, f"must be {f.choices[0]!r}"
        if f.kind == "enum":
            return None, f"must be one of {', '.join(map(repr, f.choices))}"
        return None, _type_error(f, value)
    if f.kind == "const":
        return (value, None) if value == f.choices[0] else (None, f"must be {f.choices[0]!r}")
    if f.kind == "enum":
        if isinstance(value, str) and value in f.choices:
            return value, None
        return None, f"must be one of {', '.join(map(repr, f.choices))}, not {value!r}"[:300]
    if f.kind == "string":
        if not isinstance(value, str):
            return None, _type_error(f, value)
        if f.minimum is not None and len(value) < f.minimum:
            return None, "must not be empty" if f.minimum == 1 else f"must be at least {int(f.minimum)} characters"
        if f.maximum is not None and len(value) > f.maximum:
            return None, f"is too long: {len(value)} characters, at most {int(f.maximum)}"
        if f.pattern and not _PATTERNS[f.pattern].match(value):
            return None, f"{value[:80]!r} does not match {f.pattern}"
        if "\x00" in value:
            return None, "contains a NUL character (\\u0000)"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None, "contains a lone surrogate (\\ud800-\\udfff): not valid Unicode text"
        return value, None
    if f.kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, _type_error(f, value)
        if f.kind == "integer":
            if isinstance(value, float):
                if not value.is_integer():
                    return None, _type_error(f, value)
                value = int(value)
        if f.minimum is not None and value < f.minimum:
            return None, f"must be >= {f.minimum:g}, not {value}"
        if f.maximum is not None and value > f.maximum:
            return None, f"must be <= {f.maximum:g}, not {value}"
        return value, None
    if f.kind == "object":
        if not isinstance(value, dict):
            return None, _type_error(f, value)
        dumped = json.dumps(value, ensure_ascii=False)
        if len(dumped) > MAX_OBJECT_CHARS:
            return None, f"is too large: at most {MAX_OBJECT_CHARS // 1024} KB of JSON"
        if "\\u0000" in dumped:
            return None, "contains a NUL character (\\u0000)"
        try:
            dumped.encode("utf-8")
        except UnicodeEncodeError:
            return None, "contains a lone surrogate (\\ud800-\\udfff): not valid Unicode text"
        return value, None
    raise AssertionError(f.kind)


def check_object(obj, fields: dict[str, Field], line: int | None, what: str) -> tuple[dict, list[dict]]:
    """Validate one decoded line against ``fields``; returns (clean values, errors)."""
    if not isinstance(obj, dict):
        return {}, [{"line": line, "field": None, "message": f"the {what} must be a JSON object"}]
    clean, errors = {}, []
    for key in obj:
        if key not in fields:
            errors.append({"line": line, "field": key,
                           "message": f"unknown field in a {what} (known: {', '.join(fields)})"})
    for name, f in fields.items():
        if name not in obj:
            if f.required:
                errors.append({"line": line, "field": name, "message": f"missing (required in a {what})"})
            continue
        value, msg = _check_value(f, obj[name])
        if msg:
            errors.append({"line": line, "field": name, "message": msg})
        else:
            clean[name] = value
    return clean, errors


def validate_header(obj, line: int | None = 1) -> tuple[dict, list[dict]]:
    if isinstance(obj, dict) and isinstance(obj.get("format"), str) and obj["format"] != FORMAT \
            and obj["format"].startswith(FORMAT_PREFIX):
        return {}, [{"line": line, "field": "format",
                     "message": f"unsupported format version {obj['format']!r}; this portal reads {FORMAT!r}"}]
    return check_object(obj, _HEADER, line, "header")


def validate_sample(obj, line: int | None = None) -> tuple[dict, list[dict]]:
    clean, errors = check_object(obj, _SAMPLE, line, "sample")
    if not errors and clean.get("parent") is not None and clean["parent"] >= clean["index"]:
        errors.append({"line": line, "field": "parent",
                       "message": f"parent {clean['parent']} must be an earlier index of the same "
                                  f"workload than this sample's index {clean['index']}"})
    if not errors:
        errors.extend(_interval_errors(clean, line))
    return clean, errors


def _interval_errors(clean: dict, line: int | None) -> list[dict]:
    """A self-reported interval comes whole (speedup_lo and speedup_hi) around its speedup."""
    lo, hi, s = clean.get("speedup_lo"), clean.get("speedup_hi"), clean.get("speedup")
    if lo is None and hi is None:
        return []
    if lo is None or hi is None:
        field = "speedup_hi" if hi is None else "speedup_lo"
        return [{"line": line, "field": field, "message": "give speedup_lo and speedup_hi together"}]
    if s is None:
        return [{"line": line, "field": "speedup", "message": "an interval needs the speedup it surrounds"}]
    if not lo <= s <= hi:
        return [{"line": line, "field": "speedup_lo",
                 "message": f"the interval must hold the speedup: speedup_lo {lo:g} <= speedup {s:g} "
                            f"<= speedup_hi {hi:g}"}]
    return []


# -- streaming ------------------------------------------------------------------------------

def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON (use null)")


def _decode(raw: bytes | str, line: int) -> tuple[Any, dict | None]:
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, {"line": line, "field": None,
                          "message": f"not UTF-8 (byte {exc.start + 1} of the line)"}
    try:
        return json.loads(raw, parse_constant=_reject_constant), None
    except RecursionError:
        return None, {"line": line, "field": None, "message": "not valid JSON: nested too deeply"}
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        col = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, {"line": line, "field": None, "message": f"not valid JSON: {msg}{col}"}


def iter_lines(stream, max_line: int = MAX_LINE_BYTES, max_total: int = MAX_TRACE_BYTES
               ) -> Iterator[tuple[int, bytes | str | None, dict | None]]:
    """Yield ``(line_number, raw_line, error)`` from a binary or text stream (anything with
    ``readline(limit)``) or an iterable of lines, never holding more than one line."""
    readline = getattr(stream, "readline", None)
    if readline is None:
        it = iter(stream)

        def readline(_limit, _it=it):
            return next(_it, b"")
    number = total = 0
    while True:
        chunk = readline(max_line + 1)
        if not chunk:
            return
        number += 1
        total += len(chunk)
        if total > max_total:
            yield number, None, {"line": number, "field": None,
                                 "message": f"the trace is larger than {max_total // (1024 * 1024)} MB"}
            return
        newline = b"\n" if isinstance(chunk, bytes) else "\n"
        if len(chunk) > max_line and not chunk.endswith(newline):
            # Skip the rest of the overlong line without keeping it.
            while chunk and not chunk.endswith(newline):
                chunk = readline(1024 * 1024)
                total += len(chunk)
                if total > max_total:
                    break
            yield number, None, {"line": number, "field": None,
                                 "message": f"line longer than {max_line // (1024 * 1024)} MB"}
            continue
        if number == 1:
            bom = b"\xef\xbb\xbf" if isinstance(chunk, bytes) else "\ufeff"
            if chunk.startswith(bom):
                chunk = chunk[len(bom):]
        yield number, chunk, None


@dataclasses.dataclass
class Trace:
    header: dict
    samples: list[dict]           # clean sample dicts, each with "line" and "workload_id"
    lines: int

    def workloads(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.samples:
            counts[s["workload_id"]] = counts.get(s["workload_id"], 0) + 1
        return counts


class _Errors(list):
    """A list of errors that stops the parse once it holds MAX_ERRORS."""

    class Full(Exception):
        pass

    def add(self, e: dict):
        self.append(e)
        if len(self) >= MAX_ERRORS:
            raise self.Full


def parse_trace(stream, catalog: WorkloadCatalog | None = None, hardware: Iterable[str] | None = None,
                max_samples: int = MAX_SAMPLES) -> Trace:
    """Parse and validate a whole trace from ``stream``; raise :class:`TraceError` with every
    problem found (up to MAX_ERRORS), each naming its line and field.

    ``catalog`` resolves workload names (default: offline, ID syntax only); ``hardware`` is the
    set of known hardware slugs (default: not checked)."""
    catalog = catalog or WorkloadCatalog.offline()
    known_hw = set(hardware) if hardware is not None else None
    errors = _Errors()
    header: dict | None = None
    header_ok = False
    samples: list[dict] = []
    seen: dict[str, dict[int, int]] = {}      # workload id -> {index: line}
    last_line = 0
    try:
        for number, raw, err in iter_lines(stream):
            last_line = number
            if err:
                errors.add(err)
                if header is None:
                    header = {}
                continue
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
                    errors.add({"line": number, "field": "format", "message":
                                f'the first line must be the header {{"format": "{FORMAT}", "method": ..., '
                                f'"model": ..., "hardware": ..., "sampling": ...}}, not a sample'})
                    header = {}
                    continue
                header, errs = validate_header(obj, number)
                for e in errs:
                    errors.add(e)
                if any(e["field"] == "format" for e in errs):
                    break    # another format or version: its lines may mean something else
                header_ok = not errs
                if known_hw is not None and "hardware" in header and header["hardware"] not in known_hw:
                    errors.add({"line": number, "field": "hardware",
                                "message": f"unknown hardware target {header['hardware']!r}; known: "
                                           f"{', '.join(sorted(known_hw))}"})
                continue
            if isinstance(obj, dict) and "format" in obj:
                errors.add({"line": number, "field": "format",
                            "message": "a second header: only the first line is a header"})
                continue
            clean, errs = validate_sample(obj, number)
            if errs:
                for e in errs:
                    errors.add(e)
                continue
            wid = catalog.resolve(clean["workload"])
            if wid is None:
                errors.add({"line": number, "field": "workload",
                            "message": f"unknown workload {clean['workload'][:80]!r}: {catalog.hint()}"})
                continue
            indices = seen.setdefault(wid, {})
            if clean["index"] in indices:
                errors.add({"line": number, "field": "index",
                            "message": f"duplicate index {clean['index']} of workload {wid} (first on line "
                                       f"{indices[clean['index']]}); indices must be 0..n-1 without gaps "
                                       f"or duplicates"})
                continue
            indices[clean["index"]] = number
            if len(samples) >= max_samples:
                errors.add({"line": number, "field": None,
                            "message": f"more than {max_samples} samples in one trace"})
                break
            clean["line"] = number
            clean["workload_id"] = wid
            samples.append(clean)
        if header is None:
            errors.add({"line": max(last_line, 1), "field": "format",
                        "message": f'the trace is empty: the first line must be the header {{"format": "{FORMAT}", ...}}'})
        elif not samples and not errors:
            errors.add({"line": last_line, "field": "workload",
                        "message": "the trace has a header but no samples"})
        if not errors:
            budget = header.get("budget") if header_ok else None
            for wid, indices in seen.items():
                n = len(indices)
                if max(indices) != n - 1:
                    missing = sorted(set(range(max(indices) + 1)) - set(indices))
                    after = min(i for i in indices if i > missing[0])
                    shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
                    errors.add({"line": indices[after], "field": "index",
                                "message": f"workload {wid}: sample indices must be 0..n-1 without gaps "
                                           f"(fast@N reads them in order); missing {shown}"})
                if budget is not None and n > budget:
                    errors.add({"line": indices.get(budget, max(indices.values())), "field": "index",
                                "message": f"workload {wid} has {n} samples, more than the header's "
                                           f"budget of {budget}"})
    except _Errors.Full:
        errors.append({"line": last_line, "field": None,
                       "message": f"stopped after {MAX_ERRORS} errors"})
    if errors:
        raise TraceError(list(errors))
    return Trace(header=header, samples=samples, lines=last_line)


# -- the JSON Schema ------------------------------------------------------------------------

def _object_schema(fields, title: str, description: str) -> dict:
    return {
        "title": title,
        "description": description,
        "type": "object",
        "properties": {f.name: f.schema() for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }


def json_schema(schema_id: str | None = None) -> dict:
    """The JSON Schema (draft 2020-12) of one line of a ``jaxbench-trace/1`` trace."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id or SCHEMA_PATH,
        "title": f"JAXBench agent trace, format {FORMAT}",
        "description": (
            "One line of a JAXBench agent trace (JSON Lines, UTF-8). The first line is the header, "
            "every further line one sample. Rules across lines, checked by the portal and by "
            "`python -m jaxbench.client validate-trace`: exactly one header, first; per workload the "
            "sample indices are 0..n-1 without gaps or duplicates (any line order); a sample's "
            "parent is an earlier index of the same workload; a self-reported interval gives "
            "speedup_lo and speedup_hi together, around its speedup; at most `budget` samples per "
            "workload; workload names and the hardware target are known to the portal. Strings are "
            "Unicode text without NUL characters; NaN and Infinity are not JSON. Limits: "
            f"{MAX_LINE_BYTES // (1024 * 1024)} MB per line, {MAX_TRACE_BYTES // (1024 * 1024)} MB "
            f"and {MAX_SAMPLES} samples per trace."),
        "oneOf": [{"$ref": "#/$defs/header"}, {"$ref": "#/$defs/sample"}],
        "$defs": {
            "header": _object_schema(HEADER_FIELDS, "Header", "The first line of a trace."),
            "sample": _object_schema(SAMPLE_FIELDS, "Sample", "One sample an agent produced."),
        },
    }
    # a self-reported interval comes whole, with its speedup (speedup_lo <= speedup <= speedup_hi
    # is checked by the parser; JSON Schema cannot compare two values)
    schema["$defs"]["sample"]["allOf"] = [
        {"if": {"required": [end], "properties": {end: {"type": "number"}}},
         "then": {"required": [other, "speedup"],
                  "properties": {other: {"type": "number"}, "speedup": {"type": "number"}}}}
        for end, other in (("speedup_lo", "speedup_hi"), ("speedup_hi", "speedup_lo"))]
    return schema


def example_trace() -> list[dict]:
    """The worked example of the docs page (and of the tests)."""
    code0 = ("import jax.numpy as jnp\n\n"
             "def workload(x, scale):\n"
             "    xf = x.astype(jnp.float32)\n"
             "    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)\n"
             "    return (xf * inv).astype(x.dtype) * scale\n")
    code1 = code0.replace("import jax.numpy as jnp", "import jax\nimport jax.numpy as jnp")
    return [
        {"format": FORMAT, "method": "iterative refinement", "model": "Gemini 3 Flash",
         "framework": "my-agent 0.3", "hardware": "cpu", "sampling": "sequential", "budget": 144,
         "settings": {"temperature": 1.0, "context": "curated TPU notes"}},
        {"workload": "12p", "index": 0, "round": 0, "code": code0, "outcome": "compile_error",
         "tokens_in": 5120, "tokens_out": 830, "cost_usd": 0.0031},
        {"workload": "12p", "index": 1, "round": 1, "parent": 0, "code": code1,
         "outcome": "correct_faster", "speedup": 1.21, "speedup_lo": 1.15, "speedup_hi": 1.26,
         "tokens_in": 6400, "tokens_out": 790,
         "cost_usd": 0.0036},
        {"workload": "8p_GEMM", "index": 0, "round": 0, "code": "", "outcome": "api_error"},
    ]


def dumps_lines(objs: Iterable[dict]) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)
