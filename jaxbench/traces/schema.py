"""The JSON Schema of the format, generated from the field specifications; the example trace."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from jaxbench.limits import MAX_LINE_BYTES, MAX_SAMPLES, MAX_TRACE_BYTES

from .fields import FORMAT, HEADER_FIELDS, SAMPLE_FIELDS, SCHEMA_PATH, Field

# -- the JSON Schema ------------------------------------------------------------------------


def _object_schema(fields: Sequence[Field], title: str, description: str) -> dict[str, Any]:
    return {
        "title": title,
        "description": description,
        "type": "object",
        "properties": {f.name: f.schema() for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }


def json_schema(schema_id: str | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one line of a ``jaxbench-trace/1`` trace."""
    schema: dict[str, Any] = {
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
            f"and {MAX_SAMPLES} samples per trace."
        ),
        "oneOf": [{"$ref": "#/$defs/header"}, {"$ref": "#/$defs/sample"}],
        "$defs": {
            "header": _object_schema(HEADER_FIELDS, "Header", "The first line of a trace."),
            "sample": _object_schema(SAMPLE_FIELDS, "Sample", "One sample an agent produced."),
        },
    }
    # a self-reported interval comes whole, with its speedup (speedup_lo <= speedup <= speedup_hi
    # is checked by the parser; JSON Schema cannot compare two values)
    schema["$defs"]["sample"]["allOf"] = [
        {
            "if": {"required": [end], "properties": {end: {"type": "number"}}},
            "then": {
                "required": [other, "speedup"],
                "properties": {other: {"type": "number"}, "speedup": {"type": "number"}},
            },
        }
        for end, other in (("speedup_lo", "speedup_hi"), ("speedup_hi", "speedup_lo"))
    ]
    return schema


def example_trace() -> list[dict[str, Any]]:
    """The worked example of the docs page (and of the tests)."""
    code0 = (
        "import jax.numpy as jnp\n\n"
        "def workload(x, scale):\n"
        "    xf = x.astype(jnp.float32)\n"
        "    inv = jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)\n"
        "    return (xf * inv).astype(x.dtype) * scale\n"
    )
    code1 = code0.replace("import jax.numpy as jnp", "import jax\nimport jax.numpy as jnp")
    return [
        {
            "format": FORMAT,
            "method": "iterative refinement",
            "model": "Gemini 3 Flash",
            "framework": "my-agent 0.3",
            "hardware": "cpu",
            "sampling": "sequential",
            "selection": "pass_at_k",
            "budget": 144,
            "settings": {"temperature": 1.0, "context": "curated TPU notes"},
        },
        {
            "workload": "12p",
            "index": 0,
            "round": 0,
            "code": code0,
            "outcome": "compile_error",
            "tokens_in": 5120,
            "tokens_out": 830,
            "cost_usd": 0.0031,
        },
        {
            "workload": "12p",
            "index": 1,
            "round": 1,
            "parent": 0,
            "code": code1,
            "outcome": "correct_faster",
            "speedup": 1.21,
            "speedup_lo": 1.15,
            "speedup_hi": 1.26,
            "tokens_in": 6400,
            "tokens_out": 790,
            "cost_usd": 0.0036,
        },
        {"workload": "8p_GEMM", "index": 0, "round": 0, "code": "", "outcome": "api_error"},
    ]


def dumps_lines(objs: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)
