"""A small structural checker for the trajectory formats (ATIF, ADK): every error names the
JSON path of the value, e.g. ``steps[3].metrics.cost_usd: expected a number, not string``.

The published schemas of both formats are pydantic models; the portal's runtime does not
depend on pydantic, so the rules are written here as plain specifications: per object, its
fields with their JSON types, whether each is required, and (for the versioned ATIF) whether
unknown fields are errors, as in the reference models (``extra="forbid"``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .fields import ErrorItem

# JSON type names as a JSON Schema writes them
STRING, INTEGER, NUMBER, BOOLEAN, OBJECT, ARRAY, NULL = (
    "string",
    "integer",
    "number",
    "boolean",
    "object",
    "array",
    "null",
)


# {field: (its JSON types, required)}
Spec = Mapping[str, tuple[tuple[str, ...], bool]]


def json_type(value: object) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, dict):
        return OBJECT
    if isinstance(value, list):
        return ARRAY
    return type(value).__name__


_ARTICLE = {INTEGER: "an integer", OBJECT: "an object", ARRAY: "an array"}


def _want(types: tuple[str, ...]) -> str:
    return " or ".join(_ARTICLE.get(t, f"a {t}") if t != NULL else "null" for t in types)


def is_type(value: object, kind: str) -> bool:
    got = json_type(value)
    if kind == NUMBER:
        return got in (INTEGER, NUMBER)
    if kind == INTEGER and got == NUMBER:
        return float(value).is_integer()  # type: ignore[arg-type]  # a float here
    return got == kind


class Checker:
    """Collects errors ``{"line": None, "field": path, "message": ...}`` up to ``limit``."""

    def __init__(self, limit: int = 50):
        self.errors: list[ErrorItem] = []
        self.limit = limit

    @property
    def full(self) -> bool:
        return len(self.errors) >= self.limit

    def add(self, path: str, message: str) -> None:
        if len(self.errors) < self.limit:
            self.errors.append({"line": None, "field": path or None, "message": message})

    def value(self, value: object, path: str, *types: str, minimum: float | None = None) -> bool:
        """Whether ``value`` has one of ``types`` (and, for numbers, is finite and >= minimum)."""
        if not any(is_type(value, t) for t in types):
            self.add(path, f"expected {_want(types)}, not {json_type(value)}")
            return False
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                self.add(path, "expected a finite number")
                return False
            if minimum is not None and value < minimum:
                self.add(path, f"must be >= {minimum:g}, not {value}")
                return False
        if isinstance(value, str) and "\x00" in value:
            self.add(path, "contains a NUL character (\\u0000)")
            return False
        return True

    def obj(
        self,
        value: object,
        path: str,
        spec: Spec,
        forbid_extra: bool,
        what: str,
        minimums: Mapping[str, float] | None = None,
    ) -> dict[str, Any] | None:
        """Check an object against ``spec`` ({field: (types, required)}); returns it when it
        is an object (its fields may still have had errors), else None."""
        if not isinstance(value, dict):
            self.add(path, f"expected {what} (an object), not {json_type(value)}")
            return None
        minimums = minimums or {}
        for name, (types, required) in spec.items():
            sub = f"{path}.{name}" if path else name
            if name not in value:
                if required:
                    self.add(sub, f"missing (required in {what})")
                continue
            self.value(value[name], sub, *types, minimum=minimums.get(name))
        if forbid_extra:
            for key in value:
                if key not in spec:
                    self.add(
                        f"{path}.{key}" if path else str(key), f"unknown field in {what} (known: {', '.join(spec)})"
                    )
        return value


def at(path: str, index: int) -> str:
    return f"{path}[{index}]"
