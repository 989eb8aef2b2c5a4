"""Validation of one header or sample object against its field specifications."""

from __future__ import annotations

import json
from typing import Any

from jaxbench.limits import MAX_OBJECT_CHARS

from .fields import _HEADER, _PATTERNS, _SAMPLE, FORMAT, FORMAT_PREFIX, ErrorItem, Field, selection_errors

# -- field validation ----------------------------------------------------------------------


def _type_error(f: Field, value: object) -> str:
    got = (
        "null"
        if value is None
        else (
            "boolean"
            if isinstance(value, bool)
            else type(value)
            .__name__.replace("str", "string")
            .replace("dict", "object")
            .replace("list", "array")
            .replace("float", "number")
            .replace("int", "integer")
        )
    )
    want = {"string": "a string", "integer": "an integer", "number": "a number", "object": "a JSON object"}.get(
        f.kind, f.kind
    )
    return f"must be {want}{' or null' if f.nullable else ''}, not {got}"


def _check_value(f: Field, value: object) -> tuple[object, str | None]:
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


def check_object(
    obj: object, fields: dict[str, Field], line: int | None, what: str
) -> tuple[dict[str, Any], list[ErrorItem]]:
    """Validate one decoded line against ``fields``; returns (clean values, errors)."""
    if not isinstance(obj, dict):
        return {}, [{"line": line, "field": None, "message": f"the {what} must be a JSON object"}]
    clean: dict[str, Any] = {}
    errors: list[ErrorItem] = []
    for key in obj:
        if key not in fields:
            errors.append(
                {"line": line, "field": key, "message": f"unknown field in a {what} (known: {', '.join(fields)})"}
            )
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


def validate_header(obj: object, line: int | None = 1) -> tuple[dict[str, Any], list[ErrorItem]]:
    if (
        isinstance(obj, dict)
        and isinstance(obj.get("format"), str)
        and obj["format"] != FORMAT
        and obj["format"].startswith(FORMAT_PREFIX)
    ):
        return {}, [
            {
                "line": line,
                "field": "format",
                "message": f"unsupported format version {obj['format']!r}; this portal reads {FORMAT!r}",
            }
        ]
    clean, errors = check_object(obj, _HEADER, line, "header")
    if not any(e["field"] in ("selection", "selector") for e in errors):
        for field, message in selection_errors(clean.get("selection"), clean.get("selector")):
            errors.append({"line": line, "field": field, "message": message})
    return clean, errors


def validate_sample(obj: object, line: int | None = None) -> tuple[dict[str, Any], list[ErrorItem]]:
    clean, errors = check_object(obj, _SAMPLE, line, "sample")
    if not errors and clean.get("parent") is not None and clean["parent"] >= clean["index"]:
        errors.append(
            {
                "line": line,
                "field": "parent",
                "message": f"parent {clean['parent']} must be an earlier index of the same "
                f"workload than this sample's index {clean['index']}",
            }
        )
    if not errors:
        errors.extend(_interval_errors(clean, line))
    return clean, errors


def _interval_errors(clean: dict[str, Any], line: int | None) -> list[ErrorItem]:
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
        return [
            {
                "line": line,
                "field": "speedup_lo",
                "message": f"the interval must hold the speedup: speedup_lo {lo:g} <= speedup {s:g} "
                f"<= speedup_hi {hi:g}",
            }
        ]
    return []
