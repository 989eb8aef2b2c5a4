"""The trace format's pure parser and its JSON Schema (no database)."""

import copy
import io
import json
import subprocess
import sys

import jsonschema
import pytest

from jaxbench import traces as tf
from tests.submissions.conftest import WORKLOADS

CATALOG = tf.WorkloadCatalog((w[0], w[1], w[2]) for w in WORKLOADS)
HEADER = {
    "format": tf.FORMAT,
    "method": "iterative refinement",
    "model": "Gemini 3 Flash",
    "hardware": "cpu",
    "sampling": "sequential",
    "budget": 4,
}


def lines(*objs) -> bytes:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs).encode()


def sample(w="12p", i=0, **kw):
    return {"workload": w, "index": i, "code": "def workload(x):\n    return x\n", **kw}


def errors_of(data: bytes, catalog=CATALOG, hardware=("cpu", "tpu-v6e")):
    with pytest.raises(tf.TraceError) as info:
        tf.parse_trace(io.BytesIO(data), catalog, hardware)
    return info.value.errors


def test_example_parses_in_order_with_every_field():
    trace = tf.parse_trace(io.BytesIO(tf.dumps_lines(tf.example_trace()).encode()), CATALOG, ["cpu"])
    assert trace.header["method"] == "iterative refinement" and trace.header["settings"]["temperature"] == 1.0
    assert [(s["workload_id"], s["index"], s["line"]) for s in trace.samples] == [
        ("12p", 0, 2),
        ("12p", 1, 3),
        ("8p", 0, 4),
    ]
    assert trace.samples[1]["parent"] == 0 and trace.samples[1]["speedup"] == 1.21
    assert (trace.samples[1]["speedup_lo"], trace.samples[1]["speedup_hi"]) == (1.15, 1.26)
    assert trace.samples[0]["tokens_in"] == 5120 and trace.samples[2]["code"] == ""
    assert trace.workloads() == {"12p": 2, "8p": 1}


def test_names_interleaving_blank_lines_bom_and_crlf():
    data = b"\xef\xbb\xbf" + lines(
        HEADER, sample("12p_RMSNorm", 1), "", sample("8p-gemm.py", 0), sample("12p-rmsnorm", 0)
    ).replace(b"\n", b"\r\n")
    trace = tf.parse_trace(io.BytesIO(data), CATALOG, ["cpu"])
    assert [(s["workload_id"], s["index"]) for s in trace.samples] == [("12p", 1), ("8p", 0), ("12p", 0)]


def test_text_streams_and_iterables_work_too():
    text = lines(HEADER, sample()).decode()
    assert len(tf.parse_trace(io.StringIO(text), CATALOG).samples) == 1
    assert len(tf.parse_trace(iter(text.splitlines(True)), CATALOG).samples) == 1


@pytest.mark.parametrize(
    "data, line, field, needle",
    [
        (lines({"method": "x"}, sample()), 1, "format", "missing"),
        (lines(sample(), sample(i=1)), 1, "format", "first line must be the header"),
        (lines({**HEADER, "format": "jaxbench-trace/2"}, sample()), 1, "format", "unsupported format version"),
        (lines({**HEADER, "format": "something-else"}, sample()), 1, "format", "must be 'jaxbench-trace/1'"),
        (lines({k: v for k, v in HEADER.items() if k != "model"}, sample()), 1, "model", "missing"),
        (lines({**HEADER, "sampling": "greedy"}, sample()), 1, "sampling", "must be one of"),
        (lines({**HEADER, "budget": 0}, sample()), 1, "budget", ">= 1"),
        (lines({**HEADER, "budget": True}, sample()), 1, "budget", "not boolean"),
        (lines({**HEADER, "settings": [1]}, sample()), 1, "settings", "JSON object"),
        (lines({**HEADER, "link": "ftp://x"}, sample()), 1, "link", "does not match"),
        (lines({**HEADER, "colour": "red"}, sample()), 1, "colour", "unknown field"),
        (lines({**HEADER, "hardware": "tpu-v99"}, sample()), 1, "hardware", "unknown hardware target"),
        (lines(HEADER, sample(), {"workload": "12p", "index": 1}), 3, "code", "missing"),
        (lines(HEADER, sample(), {"index": 1, "code": ""}), 3, "workload", "missing"),
        (lines(HEADER, sample(), sample(i="1")), 3, "index", "must be an integer"),
        (lines(HEADER, sample(), sample(i=1.5)), 3, "index", "must be an integer"),
        (lines(HEADER, sample(), sample(i=-1)), 3, "index", ">= 0"),
        (lines(HEADER, sample(), sample(i=1, code=7)), 3, "code", "must be a string"),
        (lines(HEADER, sample(), sample(i=1, speedup="fast")), 3, "speedup", "must be a number"),
        (lines(HEADER, sample(), sample(i=1, outcome="great")), 3, "outcome", "must be one of"),
        (lines(HEADER, sample(), sample(i=1, tokens_in=-3)), 3, "tokens_in", ">= 0"),
        (lines(HEADER, sample(), sample(i=1, parent=1)), 3, "parent", "earlier index"),
        (lines(HEADER, sample(), sample(i=1, speedup=1.2, speedup_lo=1.1)), 3, "speedup_hi", "together"),
        (lines(HEADER, sample(), sample(i=1, speedup_lo=0.9, speedup_hi=1.1)), 3, "speedup", "needs the speedup"),
        (
            lines(HEADER, sample(), sample(i=1, speedup=1.2, speedup_lo=1.3, speedup_hi=1.4)),
            3,
            "speedup_lo",
            "must hold the speedup",
        ),
        (lines(HEADER, sample(), sample(i=1, speedup=1.2, speedup_lo=-1, speedup_hi=1.4)), 3, "speedup_lo", ">= 0"),
        (lines(HEADER, sample(), sample(i=1, extra=1)), 3, "extra", "unknown field"),
        (lines(HEADER, sample(), sample("99p", 0)), 3, "workload", "unknown workload"),
        (lines(HEADER, sample(), sample("12p_NotRMSNorm", 1)), 3, "workload", "unknown workload"),
        (lines(HEADER, sample(), sample(i=0)), 3, "index", "duplicate index 0 of workload 12p (first on line 2)"),
        (
            lines(HEADER, sample(), sample(i=2), sample(i=3)),
            3,
            "index",
            "without gaps (fast@N reads them in order); missing 1",
        ),
        (lines(HEADER, sample("8p", 1)), 2, "index", "missing 0"),
        (lines(HEADER, *[sample(i=i) for i in range(5)]), 6, "index", "more than the header's budget of 4"),
        (lines(HEADER, sample(), {**HEADER}), 3, "format", "a second header"),
        (lines(HEADER, sample(), "[1, 2]"), 3, None, "must be a JSON object"),
        (lines(HEADER, sample(), '{"workload": "12p",'), 3, None, "not valid JSON"),
        (lines(HEADER, sample(), '{"workload": "12p", "index": 1, "code": "", "speedup": NaN}'), 3, None, "NaN"),
        (lines(HEADER, sample(), sample(i=1, code="a\u0000b")), 3, "code", "NUL"),
        (lines(HEADER, sample(), '{"workload": "12p", "index": 1, "code": "\\ud800"}'), 3, "code", "lone surrogate"),
        (lines(HEADER), 1, "workload", "no samples"),
        (b"", 1, "format", "empty"),
    ],
)
def test_every_error_names_line_and_field(data, line, field, needle):
    errors = errors_of(data)
    match = [e for e in errors if e["line"] == line and e["field"] == field and needle in e["message"]]
    assert match, errors


@pytest.mark.parametrize(
    "line, needle",
    [
        # cut after a comma: json alone says "line 2 column 1" (past the line break)
        ('{"workload": "12p",', "the line ends at column 19 before its value is complete"),
        # cut inside the code string: where it stops and where the string began
        (
            '{"workload": "12p", "index": 1, "code": "def wor',
            "the line ends at column 48 before its value is complete (Unterminated string starting at column 41)",
        ),
        ('{"workload": "12p", "index": 1, "code": tru}', "Expecting value at column 41"),
    ],
)
def test_a_broken_json_line_is_named_where_it_broke(line, needle):
    errors = errors_of(lines(HEADER, sample(), line))
    assert [e["message"] for e in errors if e["line"] == 3] == [f"not valid JSON: {needle}"], errors


def test_non_utf8_line_is_named():
    errors = errors_of(lines(HEADER, sample()) + b'{"workload": "12p", "index": 1, "code": "\xff\xfe"}\n')
    assert errors == [{"line": 3, "field": None, "message": "not UTF-8 (byte 42 of the line)"}]


def test_overlong_line_is_skipped_and_named(monkeypatch):
    monkeypatch.setattr(tf, "MAX_LINE_BYTES", 200)
    long = json.dumps(sample(i=1, code="x" * 1000))
    data = lines(HEADER, sample(), long, sample(i=1))
    gen = tf.iter_lines(io.BytesIO(data), max_line=200)
    got = [(n, err and err["message"]) for n, _, err in gen]
    assert got[2][0] == 3 and "longer than" in got[2][1] and got[3] == (4, None)


def test_size_cap_stops_the_parse():
    data = lines(HEADER, *[sample(i=i) for i in range(50)])
    out = list(tf.iter_lines(io.BytesIO(data), max_total=1000))
    assert out[-1][2] and "larger than" in out[-1][2]["message"]


def test_errors_are_capped():
    data = lines(HEADER, *[{"bad": i} for i in range(200)])
    errors = errors_of(data)
    assert len(errors) == tf.MAX_ERRORS + 1 and "stopped after" in errors[-1]["message"]


def test_offline_catalog_checks_ids_only():
    offline = tf.WorkloadCatalog.offline()
    assert offline.resolve("12p_Whatever.py") == "12p" and offline.resolve("050k") == "50k"
    assert offline.resolve("18p") is None and offline.resolve("3k") is None and offline.resolve("rmsnorm") is None
    assert tf.parse_trace(io.BytesIO(lines({**HEADER, "hardware": "tpu-v99"}, sample("7p"))))


def test_catalog_matches_the_registry_rules():
    assert CATALOG.resolve("12p") == CATALOG.resolve("12P_rmsnorm.py") == CATALOG.resolve("012p-rmsnorm") == "12p"
    assert CATALOG.resolve("18k_Conv2D_ReLU_BiasAdd") == "18k"
    assert CATALOG.resolve("12p_rms") is None and CATALOG.resolve("2p") is None


# -- the JSON Schema agrees with the parser -------------------------------------------------

SCHEMA = tf.json_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
HEADER_V = jsonschema.Draft202012Validator(
    {k: v for k, v in SCHEMA.items() if k != "oneOf"} | {"$ref": "#/$defs/header"}
)


def _line_variants():
    good_h = dict(
        HEADER,
        framework="x",
        settings={"a": [1, {"b": None}]},
        description="d",
        link="https://example.org/x",
        upload_key="run-1:a/b",
    )
    good_s = sample(
        round=2, parent=0, i=3, outcome="correct_faster", speedup=1.5, tokens_in=1, tokens_out=2, cost_usd=0.01
    )
    yield "header", good_h
    yield "header", HEADER
    yield "header", {**HEADER, "budget": None, "framework": None, "settings": None}
    yield "sample", good_s
    yield "sample", sample()
    yield "sample", sample(code="")
    yield "sample", sample(round=None, parent=None, outcome=None, speedup=None)
    yield "sample", sample(i=2.0)
    yield "sample", sample(outcome="correct_tie", speedup=1.02, speedup_lo=0.97, speedup_hi=1.08)
    yield "sample", sample(speedup=1.02, speedup_lo=None, speedup_hi=None)
    yield "sample", sample(speedup=1.02, speedup_lo=0.97)  # half an interval
    yield "sample", sample(speedup=1.02, speedup_hi=1.1, speedup_lo=None)
    yield "sample", sample(speedup_lo=0.97, speedup_hi=1.08)  # an interval around nothing
    yield "sample", sample(speedup=None, speedup_lo=0.97, speedup_hi=1.08)
    for key in ("method", "model", "hardware", "sampling", "format"):
        h = dict(HEADER)
        del h[key]
        yield "header", h
    for key, bad in [
        ("method", ""),
        ("method", 3),
        ("model", None),
        ("hardware", "TPU v6e"),
        ("sampling", "x"),
        ("budget", 0),
        ("budget", 1.5),
        ("budget", "3"),
        ("budget", False),
        ("settings", "x"),
        ("link", "javascript:alert(1)"),
        ("upload_key", ""),
        ("upload_key", "-x"),
        ("upload_key", "k" * 129),
        ("method", "m" * 121),
        ("extra", 1),
        ("format", "jaxbench-trace/1 "),
    ]:
        yield "header", {**HEADER, key: bad}
    for key in ("workload", "index", "code"):
        s = sample()
        del s[key]
        yield "sample", s
    for key, bad in [
        ("workload", ""),
        ("workload", 12),
        ("index", -1),
        ("index", "0"),
        ("index", True),
        ("index", 0.5),
        ("round", -1),
        ("round", "1"),
        ("parent", -2),
        ("code", None),
        ("code", ["x"]),
        ("outcome", "fine"),
        ("speedup", -0.1),
        ("speedup", "1.2"),
        ("tokens_out", 1.5),
        ("cost_usd", False),
        ("more", 1),
        ("code", "x" * (tf.MAX_CODE_CHARS + 1)),
    ]:
        yield "sample", {**sample(), key: bad}
    yield "sample", [1, 2]
    yield "sample", "text"


@pytest.mark.parametrize("kind, obj", list(_line_variants()))
def test_schema_and_parser_agree(kind, obj):
    validate = tf.validate_header if kind == "header" else tf.validate_sample
    _, errors = validate(copy.deepcopy(obj), 1)
    parser_ok = not errors
    schema_ok = VALIDATOR.is_valid(obj)
    assert parser_ok == schema_ok, (errors, list(VALIDATOR.iter_errors(obj))[:3])
    if kind == "header" and isinstance(obj, dict):
        assert HEADER_V.is_valid(obj) == parser_ok


def test_schema_is_valid_and_covers_the_example():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    for obj in tf.example_trace():
        VALIDATOR.validate(obj)
    assert set(SCHEMA["$defs"]["sample"]["properties"]) == {f.name for f in tf.SAMPLE_FIELDS}
    assert SCHEMA["$defs"]["header"]["properties"]["format"]["const"] == "jaxbench-trace/1"


def test_the_pure_modules_import_without_django():
    code = (
        "import sys; import jaxbench.traces, jaxbench.client.__main__, jaxbench.client.commands; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework', 'jax', 'numpy') "
        "or m.startswith(('evaluator.models', 'submissions.models', 'catalog', 'portal'))]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_client_spells_the_harness_outcomes_exactly():
    """The trace format and the CLI take their outcomes from the one definition in
    jaxbench.record (Django-free, so the client still imports nothing of the portal)."""
    from jaxbench import record
    from jaxbench.client import commands

    assert tf.OUTCOMES == record.OUTCOMES + ("api_error",)
    assert set(commands.CORRECT) == set(record.CORRECT_OUTCOMES)
    for args in ((1.4221, 1.371, 1.48), (1.4221,), (None,)):
        assert commands.format_speedup(*args) == record.format_speedup(*args)
    assert commands.format_speedup is record.format_speedup
