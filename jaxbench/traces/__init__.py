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
* ``selection`` (how the samples were chosen: ``pass_at_k``, ``best_at_k``, ``single_attempt``;
  absent: "undeclared") holds together: ``best_at_k`` names its ``selector``, only it has one, and
  ``best_at_k`` and ``single_attempt`` carry one sample per workload;
* workload names and the hardware target are known to the portal (checked when the caller
  supplies the catalogue; offline, only the workload ID part of a name is checked).

Parsing is streaming: the input is read line by line with a cap on each line, never loaded
whole; every error names its line number and field.

Trajectories as agent frameworks write them, Harbor's ATIF and Google ADK sessions, are read
too (``trajectory``, ``atif``, ``adk``): :func:`open_upload` sniffs an upload, and
:func:`parse_trajectory` turns such a document into the same :class:`Trace`.
"""

from __future__ import annotations

# the format's caps, defined in jaxbench.limits
from jaxbench.limits import MAX_BUDGET, MAX_CODE_CHARS, MAX_LINE_BYTES, MAX_OBJECT_CHARS, MAX_SAMPLES, MAX_TRACE_BYTES

from .catalog import WorkloadCatalog
from .fields import (
    FORMAT,
    FORMAT_PREFIX,
    HARDWARE_PATTERN,
    HEADER_FIELDS,
    LINK_PATTERN,
    MAX_ERRORS,
    ONE_SAMPLE_SELECTIONS,
    OUTCOMES,
    SAMPLE_FIELDS,
    SAMPLING,
    SCHEMA_PATH,
    SELECTION_HELP,
    SELECTION_LABELS,
    SELECTIONS,
    UNDECLARED,
    UPLOAD_KEY_PATTERN,
    Field,
    TraceError,
    format_error,
    selection_errors,
)
from .parse import Trace, iter_lines, parse_trace
from .schema import dumps_lines, example_trace, json_schema
from .trajectory import CODE_ARGUMENTS, PATH_ARGUMENTS, UPLOAD_OPTIONS, open_upload, parse_trajectory
from .validate import check_object, validate_header, validate_sample

__all__ = [
    "FORMAT",
    "FORMAT_PREFIX",
    "Field",
    "HARDWARE_PATTERN",
    "HEADER_FIELDS",
    "LINK_PATTERN",
    "MAX_ERRORS",
    "ONE_SAMPLE_SELECTIONS",
    "OUTCOMES",
    "SAMPLE_FIELDS",
    "SAMPLING",
    "SCHEMA_PATH",
    "SELECTIONS",
    "SELECTION_HELP",
    "SELECTION_LABELS",
    "UNDECLARED",
    "selection_errors",
    "TraceError",
    "UPLOAD_KEY_PATTERN",
    "format_error",
    "WorkloadCatalog",
    "check_object",
    "validate_header",
    "validate_sample",
    "Trace",
    "iter_lines",
    "parse_trace",
    "dumps_lines",
    "example_trace",
    "json_schema",
    "CODE_ARGUMENTS",
    "PATH_ARGUMENTS",
    "UPLOAD_OPTIONS",
    "open_upload",
    "parse_trajectory",
    "MAX_BUDGET",
    "MAX_CODE_CHARS",
    "MAX_LINE_BYTES",
    "MAX_OBJECT_CHARS",
    "MAX_SAMPLES",
    "MAX_TRACE_BYTES",
]
