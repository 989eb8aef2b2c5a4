"""The fields of a trace's header and samples, with their types, limits and help texts (one
specification: the validator, the JSON Schema and /docs/trace-format/ are generated from it)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from jaxbench import record
from jaxbench.limits import MAX_BUDGET, MAX_CODE_CHARS, MAX_SAMPLES, META_LIMITS

FORMAT = "jaxbench-trace/1"
FORMAT_PREFIX = "jaxbench-trace/"
SCHEMA_PATH = "/schemas/jaxbench-trace-1.json"

MAX_ERRORS = 50  # then parsing stops with a note
# one problem found in a trace: {"line", "field", "message"} (and "file" where the caller adds it)
ErrorItem = dict[str, Any]

SAMPLING = ("independent", "sequential")
# How the samples of an entry were chosen (SWE-bench's rule: an agent entry says what it is).
# "pass_at_k": every sample the agent produced is in the trace and scored (fast@N over N = 1..k);
# "best_at_k": one sample per workload, picked among the k it produced (k = budget) by the agent's
# own selector, which never saw a verdict of this portal or of any hidden test (a non-oracle
# selector, named in "selector"); "single_attempt": one sample per workload, no selection.
# An entry that does not say is "undeclared" (UNDECLARED: the portal's value, never uploaded).
SELECTIONS = ("pass_at_k", "best_at_k", "single_attempt")
UNDECLARED = "undeclared"
SELECTION_LABELS = {
    "pass_at_k": "pass@k",
    "best_at_k": "best@k",
    "single_attempt": "single attempt",
    UNDECLARED: "undeclared",
}
# what a submission stores, with its label
SELECTION_CHOICES = tuple(SELECTION_LABELS.items())
SELECTION_HELP = {
    "pass_at_k": "every sample the agent produced is scored (fast@N over N = 1..k)",
    "best_at_k": "one sample per workload, chosen among k by the agent's own selector, without any verdict of this portal",
    "single_attempt": "one attempt per workload, nothing chosen",
    UNDECLARED: "the entry does not say how its samples were chosen",
}
# the selections that allow one sample per workload only
ONE_SAMPLE_SELECTIONS = ("best_at_k", "single_attempt")


def selection_errors(selection: str | None, selector: str | None) -> list[tuple[str, str]]:
    """[(field, message)] when a declaration does not hold together: best@k names its selector,
    and only best@k has one."""
    if selection == "best_at_k" and not (selector or "").strip():
        return [("selector", 'name the non-oracle selector that picked each sample (required with "best_at_k")')]
    if selection != "best_at_k" and (selector or "").strip():
        return [("selector", 'a selector belongs to "selection": "best_at_k" only')]
    return []


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
    kind: str  # "string", "integer", "number", "object", "enum", "const"
    description: str
    required: bool = False
    nullable: bool = False
    minimum: float | None = None  # numbers: minimum; strings: minLength
    maximum: float | None = None  # numbers: maximum; strings: maxLength
    choices: tuple[str, ...] = ()
    pattern: str | None = None

    def schema(self) -> dict[str, Any]:
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
    Field("format", "const", f'The format and its version, exactly "{FORMAT}".', required=True, choices=(FORMAT,)),
    Field(
        "method",
        "string",
        "The method: e.g. best-of-N, iterative refinement, Autocomp.",
        required=True,
        minimum=1,
        maximum=META_LIMITS["method"],
    ),
    Field(
        "model",
        "string",
        "The model that wrote the samples, e.g. Gemini 3 Flash.",
        required=True,
        minimum=1,
        maximum=META_LIMITS["model_name"],
    ),
    Field(
        "framework", "string", "The agent framework and its version.", maximum=META_LIMITS["framework"], nullable=True
    ),
    Field(
        "hardware",
        "string",
        "The hardware target slug to evaluate on, e.g. tpu-v6e or cpu.",
        required=True,
        pattern=HARDWARE_PATTERN,
        minimum=1,
        maximum=40,
    ),
    Field(
        "sampling",
        "enum",
        '"independent": samples drawn independently (best-of-N); '
        '"sequential": a search, each sample may refine earlier ones.',
        required=True,
        choices=SAMPLING,
    ),
    Field(
        "selection",
        "enum",
        'How the samples were chosen: "pass_at_k": every sample the agent produced is here and '
        'scored; "best_at_k": one sample per workload, picked among the k it produced (k = budget) '
        'by the agent\'s own selector, which saw no verdict of this portal or of a hidden test (name '
        'it in "selector"); "single_attempt": one sample per workload, nothing chosen. Absent: the '
        'entry is shown as "undeclared".',
        nullable=True,
        choices=SELECTIONS,
    ),
    Field(
        "selector",
        "string",
        'With "selection": "best_at_k": how the agent picked its sample without an oracle (e.g. '
        '"its own timing on random inputs", "a learned reward model").',
        minimum=1,
        maximum=META_LIMITS["selector"],
        nullable=True,
    ),
    Field(
        "budget",
        "integer",
        "The sampling budget: the most samples per workload.",
        nullable=True,
        minimum=1,
        maximum=MAX_BUDGET,
    ),
    Field("settings", "object", "Free-form settings (temperature, context, prompts, ...).", nullable=True),
    Field(
        "description",
        "string",
        "A description shown with the submission.",
        maximum=META_LIMITS["description"],
        nullable=True,
    ),
    Field(
        "link",
        "string",
        "A link to a paper, code or write-up (http or https).",
        maximum=META_LIMITS["link"],
        pattern=LINK_PATTERN,
        nullable=True,
    ),
    Field(
        "upload_key",
        "string",
        "A client-chosen key, unique per team: uploading again with the "
        "same key returns the first submission instead of creating a duplicate.",
        minimum=1,
        maximum=META_LIMITS["upload_key"],
        pattern=UPLOAD_KEY_PATTERN,
        nullable=True,
    ),
)

SAMPLE_FIELDS = (
    Field(
        "workload",
        "string",
        "The workload: an ID (12p), a slug (12p-rmsnorm) or the public suite's folder name (12p_RMSNorm).",
        required=True,
        minimum=1,
        maximum=120,
    ),
    Field(
        "index",
        "integer",
        "The sample's index within its workload: 0, 1, ... without gaps; the order in which the samples were produced.",
        required=True,
        minimum=0,
        maximum=MAX_SAMPLES,
    ),
    Field("round", "integer", "The search round that produced the sample.", nullable=True, minimum=0),
    Field("parent", "integer", "The index of the sample (same workload) this one refines.", nullable=True, minimum=0),
    Field(
        "code",
        "string",
        "The candidate's Python source (may be empty when the model's API "
        "call failed; it then counts as a failed sample).",
        required=True,
        maximum=MAX_CODE_CHARS,
    ),
    Field(
        "outcome",
        "enum",
        "The agent's own verdict (self-reported; the portal evaluates anyway).",
        nullable=True,
        choices=OUTCOMES,
    ),
    Field("speedup", "number", "The agent's own measured speedup (self-reported).", nullable=True, minimum=0),
    Field(
        "speedup_lo",
        "number",
        "Optional: the lower end of the agent's own 95% interval of its "
        "speedup (self-reported; with speedup_hi and speedup, speedup_lo <= speedup <= speedup_hi). "
        "The portal's own verdict says faster only when its interval lies above 1.0.",
        nullable=True,
        minimum=0,
    ),
    Field(
        "speedup_hi", "number", "Optional: the upper end of that interval (self-reported).", nullable=True, minimum=0
    ),
    Field("tokens_in", "integer", "Prompt tokens spent on this sample.", nullable=True, minimum=0),
    Field("tokens_out", "integer", "Completion tokens spent on this sample.", nullable=True, minimum=0),
    Field("cost_usd", "number", "The API cost of this sample in US dollars.", nullable=True, minimum=0),
)

_HEADER = {f.name: f for f in HEADER_FIELDS}
_SAMPLE = {f.name: f for f in SAMPLE_FIELDS}
_PATTERNS = {f.pattern: re.compile(f.pattern) for f in HEADER_FIELDS + SAMPLE_FIELDS if f.pattern}


class TraceError(ValueError):
    """The trace is invalid; ``errors`` is a list of ``{"line", "field", "message"}``."""

    def __init__(self, errors: list[ErrorItem]):
        self.errors = errors
        first = errors[0] if errors else {"line": None, "field": None, "message": "invalid trace"}
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{format_error(first)}{more}")


def format_error(e: ErrorItem) -> str:
    where = []
    if e.get("file"):
        where.append(str(e["file"]))
    if e.get("line") is not None:
        where.append(f"line {e['line']}")
    if e.get("field"):
        where.append(f"field {e['field']!r}")
    return (", ".join(where) + ": " if where else "") + str(e.get("message", ""))
