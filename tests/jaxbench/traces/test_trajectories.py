"""ATIF trajectories and ADK sessions read natively (jaxbench.traces.trajectory, atif, adk):
the fixtures parse into the right kernels with their steps' times and cumulative usage, the
upload is sniffed without changing how a jaxbench-trace/1 file is read, and every malformed
document is refused with the JSON path of the problem (no database)."""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
import pathlib
import re

import pytest

from jaxbench import traces as tf
from jaxbench.traces import trajectory
from tests.submissions.conftest import WORKLOADS

CATALOG = tf.WorkloadCatalog((w[0], w[1], w[2]) for w in WORKLOADS)
FIXTURES = pathlib.Path(__file__).parent / "fixtures"
HW = ("cpu", "tpu-v6e")


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def parse(doc: dict, **options) -> tf.Trace:
    return tf.parse_trajectory(json.dumps(doc).encode(), CATALOG, HW, options)


def errors_of(doc: dict | bytes, **options) -> list[dict]:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    with pytest.raises(tf.TraceError) as info:
        tf.parse_trajectory(data, CATALOG, HW, options)
    return info.value.errors


def brief(t: tf.Trace) -> list[tuple]:
    return [
        (
            s["workload_id"],
            s["index"],
            s["step_ref"],
            s["tokens_in"],
            s["tokens_out"],
            s["cost_usd"],
            s["cum_tokens_in"],
            s["cum_tokens_out"],
            s["cum_cost_usd"],
        )
        for s in t.samples
    ]


# -- valid documents -------------------------------------------------------------------------


def test_atif_fixture_gives_its_three_kernels_with_steps_times_and_cumulative_usage():
    t = parse(load("atif_two_workloads.json"))
    assert brief(t) == [
        ("12p", 0, "step 3 (steps[2].tool_calls[0])", 1000, 200, 0.01, 1000, 200, 0.01),
        # the bash step between the two kernels is paid for by the second one
        ("12p", 1, "step 5 (steps[4].tool_calls[0])", 3500, 350, 0.032, 4500, 550, 0.042),
        ("8p", 0, "step 6 (steps[5].tool_calls[0])", 800, 100, 0.005, 5300, 650, 0.047),
    ]
    assert [s["step_at"] for s in t.samples] == [
        dt.datetime(2026, 3, 2, 10, 0, 9, tzinfo=dt.UTC),
        dt.datetime(2026, 3, 2, 10, 1, 2, tzinfo=dt.UTC),
        dt.datetime(2026, 3, 2, 10, 1, 40, tzinfo=dt.UTC),
    ]
    assert "rmsnorm v1" in t.samples[0]["code"] and "gemm v1" in t.samples[2]["code"]
    h = t.header
    assert (h["method"], h["model"], h["framework"], h["hardware"], h["sampling"], h["selection"]) == (
        "kernel-agent",
        "claude-sonnet-4",
        "kernel-agent 0.4.1 (ATIF-v1.4)",
        "cpu",
        "sequential",
        "pass_at_k",
    )
    traj = h["settings"]["trajectory"]
    assert traj["format"] == "ATIF-v1.4" and traj["session_id"] == "run-7f3a" and traj["kernels"] == 3
    assert traj["reported_totals"]["total_cost_usd"] == 0.048


def test_adk_fixture_reads_usage_thoughts_cost_and_the_declared_workload():
    t = parse(load("adk_session.json"))
    assert brief(t) == [
        ("12p", 0, "event e2 (events[1].content.parts[1].function_call)", 900, 200, 0.004, 900, 200, 0.004),
        ("12p", 1, "event e4 (events[3].content.parts[0].function_call)", 1200, 100, 0.006, 2100, 300, 0.01),
    ]
    assert t.samples[0]["step_at"] == dt.datetime(2026, 3, 2, 10, 0, 12, 500000, tzinfo=dt.UTC)
    assert (t.header["method"], t.header["model"], t.header["framework"]) == (
        "ADK refinement loop",
        "gemini-2.5-pro",
        "Google ADK, app pallas_agent",
    )


def _camel(value):
    if isinstance(value, list):
        return [_camel(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            name = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k)
            out[name] = v if k in ("state", "args", "response", "custom_metadata") else _camel(v)
        return out
    return value


def test_adk_by_alias_camel_case_reads_the_same():
    doc = load("adk_session.json")
    camel = _camel(doc)
    assert "appName" in camel and "usageMetadata" in camel["events"][1]
    assert brief(parse(camel)) == brief(parse(doc))


def test_upload_options_fill_what_the_document_does_not_say():
    doc = load("atif_two_workloads.json")
    del doc["extra"]
    assert errors_of(doc)[0]["field"] == "hardware"
    t = parse(doc, hardware="tpu-v6e", method="My search", model="Opus")
    assert (t.header["hardware"], t.header["method"], t.header["model"]) == ("tpu-v6e", "My search", "Opus")


def test_a_kernel_without_a_path_takes_the_declared_or_uploaded_workload():
    doc = load("atif_two_workloads.json")
    doc["steps"][2]["tool_calls"][0]["arguments"] = {
        "content": doc["steps"][2]["tool_calls"][0]["arguments"]["content"]
    }
    [e] = errors_of(doc)
    assert e["field"] == "steps[2].tool_calls[0]" and "names no workload" in e["message"]
    assert brief(parse(doc, workload="13p-cross-entropy"))[0][:2] == ("13p", 0)


def test_fenced_blocks_count_only_when_no_tool_call_writes_a_kernel():
    code = load("atif_two_workloads.json")["steps"][2]["tool_calls"][0]["arguments"]["content"]
    doc = {
        "schema_version": "ATIF-v1.6",
        "session_id": "chat-1",
        "agent": {"name": "chat", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": f"Make this faster:\n```python\n{code}```\n"},
            {
                "step_id": 2,
                "source": "agent",
                "message": [
                    {"type": "text", "text": f"Here:\n```python\n{code}# v1\n```\nand a helper:\n```python\nx = 1\n```"}
                ],
                "metrics": {"prompt_tokens": 10, "completion_tokens": 5},
            },
        ],
    }
    # the user's block is not the agent's kernel; the helper has no workload
    [e] = errors_of(doc, hardware="cpu")
    assert e["field"] == "steps[1].message" and "no workload for them" in e["message"]
    t = parse(doc, hardware="cpu", workload="12p")
    assert brief(t) == [("12p", 0, "step 2 (steps[1].message)", 10, 5, None, 10, 5, None)]


def test_notes_and_commands_are_not_kernels_and_a_run_without_kernels_is_refused():
    doc = load("atif_two_workloads.json")
    for i in (2, 4, 5):
        doc["steps"][i]["tool_calls"][0]["arguments"] = {"command": "ls"}
    [e] = errors_of(doc)
    assert e["field"] is None and e["message"].startswith("no kernel found in the trajectory")


# -- sniffing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, kind",
    [
        (json.dumps(load("atif_two_workloads.json"), indent=2).encode(), "json"),
        (json.dumps(load("atif_two_workloads.json")).encode(), "json"),
        (b"\n\n" + json.dumps(load("adk_session.json"), indent=1).encode(), "json"),
        (tf.dumps_lines(tf.example_trace()).encode(), "jsonl"),
        (b'{"format": "jaxbench-trace/1",\n', "jsonl"),  # a broken header stays the line parser's
        (b'{"method": "m"}\n', "jsonl"),
        (b"", "jsonl"),
        (b"not json\n", "jsonl"),
    ],
)
def test_open_upload_sniffs_the_format(data, kind):
    got, source = tf.open_upload(io.BytesIO(data))
    assert got == kind
    if kind == "json":
        assert source == data
    else:  # the same lines, still to be read line by line
        out = b""
        while chunk := source.readline(1 << 20):
            out += chunk
        assert out == data


def test_a_jsonl_trace_through_open_upload_parses_as_before():
    data = tf.dumps_lines(tf.example_trace()).encode()
    _, stream = tf.open_upload(io.BytesIO(data))
    assert tf.parse_trace(stream, CATALOG) == tf.parse_trace(io.BytesIO(data), CATALOG)


def test_an_oversized_document_is_refused_before_parsing():
    data = json.dumps(load("atif_two_workloads.json"), indent=2).encode()
    assert tf.open_upload(io.BytesIO(data), max_bytes=1000) == ("too_large", None)


# -- malformed documents: each error names its JSON path ---------------------------------------


def _atif(edit):
    doc = load("atif_two_workloads.json")
    edit(doc)
    return doc


def _adk(edit):
    doc = load("adk_session.json")
    edit(doc)
    return doc


def _set(path, value):
    def edit(doc):
        *head, last = path
        obj = doc
        for k in head:
            obj = obj[k]
        obj[last] = value

    return edit


def _delete(path):
    def edit(doc):
        *head, last = path
        obj = doc
        for k in head:
            obj = obj[k]
        del obj[last]

    return edit


MALFORMED = [
    (
        _atif(_set(["steps", 3, "metrics", "cost_usd"], "0.01")),
        "steps[3].metrics.cost_usd",
        "expected a number or null, not string",
    ),
    (
        _atif(_set(["steps", 2, "metrics", "prompt_tokens"], -5)),
        "steps[2].metrics.prompt_tokens",
        "must be >= 0, not -5",
    ),
    (
        _atif(_set(["steps", 2, "metrics", "completion_tokens"], 1.5)),
        "steps[2].metrics.completion_tokens",
        "expected an integer or null, not number",
    ),
    (
        _atif(_set(["steps", 1, "step_id"], 7)),
        "steps[1].step_id",
        "expected 2 (step_ids run 1, 2, ... in order), got 7",
    ),
    (
        _atif(_set(["steps", 0, "source"], "robot")),
        "steps[0].source",
        "must be one of 'system', 'user', 'agent', not 'robot'",
    ),
    (
        _atif(_set(["steps", 1, "metrics"], {"prompt_tokens": 3})),
        "steps[1].metrics",
        "only an agent step has metrics (this step's source is 'user')",
    ),
    (
        _atif(_set(["steps", 2, "thoughts"], "x")),
        "steps[2].thoughts",
        "unknown field in a step (known: step_id, timestamp,",
    ),
    (_atif(_delete(["agent", "version"])), "agent.version", "missing (required in the agent)"),
    (_atif(_delete(["steps", 4, "message"])), "steps[4].message", "missing (required in a step)"),
    (
        _atif(_set(["schema_version"], "ATIF-v2.0")),
        "schema_version",
        "unsupported ATIF version 'ATIF-v2.0'; this portal reads ATIF-v1.0 to ATIF-v1.7",
    ),
    (_atif(_delete(["session_id"])), "session_id", "missing (required in ATIF-v1.4; optional from ATIF-v1.7)"),
    (
        _atif(_set(["steps", 2, "timestamp"], "yesterday")),
        "steps[2].timestamp",
        "not an ISO 8601 timestamp: 'yesterday'",
    ),
    (
        _atif(_set(["steps", 2, "tool_calls", 0, "arguments"], '{"path": "12p.py"}')),
        "steps[2].tool_calls[0].arguments",
        "expected an object, not string",
    ),
    (
        _atif(_set(["steps", 2, "observation", "results", 0, "source_call_id"], "call_9")),
        "steps[2].observation.results[0].source_call_id",
        "'call_9' is not a tool_call_id of this step's tool_calls",
    ),
    (_atif(_set(["steps"], [])), "steps", "must hold at least one step"),
    (
        _atif(_set(["final_metrics", "total_cost_usd"], "lots")),
        "final_metrics.total_cost_usd",
        "expected a number or null, not string",
    ),
    (
        _atif(_set(["extra", "jaxbench"], {"hardware": "cpu", "workload": 12})),
        "extra.jaxbench.workload",
        "expected a string or null, not integer",
    ),
    (
        _atif(_set(["extra", "jaxbench"], {"hardware": "gpu-b9000"})),
        "extra.jaxbench.hardware",
        "unknown hardware target 'gpu-b9000'; known: cpu, tpu-v6e",
    ),
    (
        _atif(_set(["steps", 5, "tool_calls", 0, "arguments", "workload"], "99p")),
        "steps[5].tool_calls[0].arguments.workload",
        "unknown workload '99p'",
    ),
    (_adk(_delete(["events", 1, "author"])), "events[1].author", "missing (required in an event)"),
    (_adk(_set(["events", 1, "timestamp"], "2026-03-02")), "events[1].timestamp", "expected a number, not string"),
    (
        _adk(_set(["events", 1, "usage_metadata", "prompt_token_count"], -1)),
        "events[1].usage_metadata.prompt_token_count",
        "must be >= 0, not -1",
    ),
    (
        _adk(_set(["events", 1, "custom_metadata", "cost_usd"], "free")),
        "events[1].custom_metadata.cost_usd",
        "expected a number or null, not string",
    ),
    (
        _adk(_delete(["events", 3, "content", "parts", 0, "function_call", "name"])),
        "events[3].content.parts[0].function_call.name",
        "missing (required in a function call)",
    ),
    (
        _adk(_set(["events", 3, "content", "parts"], "oops")),
        "events[3].content.parts",
        "expected an array or null, not string",
    ),
    (_adk(_delete(["user_id"])), "user_id", "missing (required in an ADK session)"),
    (_adk(_set(["state", "jaxbench", "workload"], "12z")), "state.jaxbench.workload", "unknown workload '12z'"),
]


@pytest.mark.parametrize("doc, field, message", MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_documents_name_the_json_path(doc, field, message):
    errors = errors_of(doc)
    assert any(e["field"] == field and e["message"].startswith(message) for e in errors), errors
    # and the one-line text of the error says where
    assert field in tf.format_error(next(e for e in errors if e["field"] == field))


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"schema_version": "ATIF-v1.4",\n  "steps": [1, }', "not valid JSON: Expecting value at column 16"),
        (b"\xff{}", "not UTF-8 (byte 1)"),
        (b'{"foo": 1}', "not a trace this portal reads"),
        (b'{"schema_version": "ATIF-v1.4", "x": NaN}', "not valid JSON: NaN is not valid JSON (use null)"),
    ],
)
def test_documents_that_are_not_json_or_not_a_known_format(data, message):
    [e] = errors_of(data)
    assert e["message"].startswith(message), e


def test_every_error_is_reported_not_only_the_first():
    doc = load("atif_two_workloads.json")
    doc["steps"][2]["metrics"]["cost_usd"] = "x"
    doc["steps"][4]["timestamp"] = "soon"
    doc["agent"]["name"] = 3
    fields = {e["field"] for e in errors_of(doc)}
    assert {"steps[2].metrics.cost_usd", "steps[4].timestamp", "agent.name"} <= fields


def test_the_kernel_rule_constants_are_documented():
    doc = trajectory.__doc__ or ""
    assert "CODE_ARGUMENTS" in doc and "def workload(" in doc and "pallas_call" in doc
    assert copy.copy(tf.UPLOAD_OPTIONS) == ("hardware", "workload", "method", "model")
