"""The bounded trace parser: caps, the resource-limited parser process and its answers
(``xplane.parse_in_subprocess``, ``parser_process.TraceParser``), against real and built traces."""

import importlib.util
import os
import pathlib
import time

import pytest

from jaxbench.profiling import xplane
from jaxbench.profiling.parser_process import TraceParser

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _bench():
    spec = importlib.util.spec_from_file_location("trace_parse_bench", ROOT / "benchmarks" / "trace_parse.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = _bench()


# --------------------------------------------------------------------------- a plain decoder


def _msg(buf):
    """Every field of one message, decoded the plain way: {number: [values]} (bytes for
    length-delimited fields, ints for varints)."""
    out: dict = {}
    pos = 0
    while pos < len(buf):
        key, pos = _uvarint(buf, pos)
        wt = key & 7
        if wt == 0:
            val, pos = _uvarint(buf, pos)
        elif wt == 2:
            n, pos = _uvarint(buf, pos)
            val, pos = buf[pos : pos + n], pos + n
        elif wt == 1:
            val, pos = buf[pos : pos + 8], pos + 8
        elif wt == 5:
            val, pos = buf[pos : pos + 4], pos + 4
        else:
            raise AssertionError(wt)
        out.setdefault(key >> 3, []).append(val)
    return out


def _uvarint(buf, pos):
    val = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        val |= (b & 0x7F) << shift
        if b < 0x80:
            return val, pos
        shift += 7


def _plain_cpu_durations(data: bytes, module: str) -> list:
    """The CPU thunk-span durations of ``module``, decoded without the reader's code."""
    for plane_bytes in _msg(data)[1]:
        plane = _msg(plane_bytes)
        if plane.get(2, [b""])[0] != b"/host:CPU":
            continue
        names = {}
        for entry in plane.get(5, []):
            e = _msg(entry)
            names[e[1][0]] = _msg(e[2][0]).get(2, [b""])[0].decode()
        runs: dict = {}
        for line_bytes in plane.get(3, []):
            line = _msg(line_bytes)
            ts = line.get(3, [0])[0]
            for ev_bytes in line.get(4, []):
                ev = _msg(ev_bytes)
                stats = {}
                for st in ev.get(4, []):
                    s = _msg(st)
                    name = names.get(s.get(1, [None])[0])
                    if 7 in s:
                        stats[name] = names.get(s[7][-1])
                    elif 4 in s or 3 in s:
                        stats[name] = (s.get(4) or s.get(3))[-1]
                if stats.get("hlo_module") != module:
                    continue
                start = ts * 1000 + ev.get(2, [0])[0]
                end = start + ev.get(3, [0])[0]
                lo, hi = runs.get(stats["run_id"], (start, end))
                runs[stats["run_id"]] = (min(lo, start), max(hi, end))
        return [(e - s) * 1e-12 for s, e in sorted(runs.values())]
    raise AssertionError("no /host:CPU plane")


# --------------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory):
    """A real trace as the timer child writes it: an exported program and the 12p baseline,
    deserialized and compiled, 5 warm-up and 50 timed calls each (benchmarks/trace_parse.py)."""
    path = tmp_path_factory.mktemp("trace") / "child.xplane.pb"
    path.write_bytes(bench.real_trace("normal"))
    return path


def test_honest_trace_gives_the_plain_decoders_durations(real_trace):
    data = real_trace.read_bytes()
    summary = xplane.parse_in_subprocess(str(real_trace), ["cand", "base"], "cpu", expected=55)
    for name in ("cand", "base"):
        ex = summary.executions(name)
        assert ex.method == "cpu_thunk_span" and len(ex.durations_s) == 55
        assert ex.durations_s == _plain_cpu_durations(data, f"jit_{name}")
        assert all(d > 0 for d in ex.durations_s) and ex.starts_ps == sorted(ex.starts_ps)
    # the same as the reader gives in this process, and the same window and count
    space = xplane.XSpace(data)
    assert summary.executions("cand") == xplane.program_executions(space, "cand", "cpu")
    assert summary.n_events == space.n_events > 55 * 2
    assert summary.profile_window_ns() == space.profile_window_ns() is not None
    # a program that is not in the trace selects nothing; one not asked for is an error
    assert xplane.parse_in_subprocess(str(real_trace), ["other"], "cpu").executions("other").durations_s == []
    with pytest.raises(xplane.TraceError, match="not asked"):
        summary.executions("other")
    assert summary.parser["peak_rss_bytes"] < 300 << 20


def test_the_parser_gets_a_descriptor_and_refuses_links(real_trace, tmp_path):
    fd = os.open(real_trace, os.O_RDONLY)
    try:
        assert len(xplane.parse_in_subprocess(fd, ["cand"], "cpu").executions("cand").durations_s) == 55
        os.fstat(fd)  # still open: the caller's
    finally:
        os.close(fd)
    os.symlink(real_trace, tmp_path / "link.xplane.pb")
    with pytest.raises(xplane.TraceError, match="cannot open"):
        xplane.parse_in_subprocess(str(tmp_path / "link.xplane.pb"), ["cand"], "cpu")


def test_parser_memory_and_time_limits_end_in_a_clean_trace_error(real_trace, tmp_path):
    # too little address space to start (numpy's libraries do not map)
    with pytest.raises(xplane.TraceError, match="too large or complex to parse within limits"):
        xplane.parse_in_subprocess(str(real_trace), ["cand"], "cpu", mem_bytes=48 << 20)
    # enough to start, not for a 38 MiB trace: the parser's own MemoryError, answered as such
    path = tmp_path / "mid.xplane.pb"
    path.write_bytes(bench.synthetic_trace(400_000, per_line=200_000, fields_per_event=10, event_bytes=100))
    with pytest.raises(xplane.TraceError, match="within limits .*out of memory"):
        xplane.parse_in_subprocess(str(path), ["cand"], "cpu", mem_bytes=150 << 20)
    assert len(xplane.parse_in_subprocess(str(path), ["cand"], "cpu").executions("cand").durations_s) == 55
    # CPU time is the trace's limit; a parser past its wall time with CPU to spare was starved
    # by the machine: the host's failure (an infrastructure retry), never the trace's verdict
    with pytest.raises(xplane.ParserUnavailable, match="too busy to parse"):
        xplane.parse_in_subprocess(str(real_trace), ["cand"], "cpu", wall_s=0.01)
    with pytest.raises(xplane.TraceError, match="within limits .*signal"):
        xplane.parse_in_subprocess(str(path), ["cand"], "cpu", cpu_s=0)


def test_a_bloated_trace_is_rejected_quickly(tmp_path):
    # one event past the per-line cap: refused after one walk over the line
    path = tmp_path / "bloated.xplane.pb"
    n = xplane.MAX_EVENTS_PER_LINE + 1
    path.write_bytes(bench.synthetic_trace(n, per_line=n, fields_per_event=9))
    t = time.monotonic()
    with pytest.raises(xplane.TraceError, match=f"more than {xplane.MAX_EVENTS_PER_LINE} events in a line") as exc:
        xplane.parse_in_subprocess(str(path), ["cand", "base"], "cpu", expected=55)
    assert time.monotonic() - t < 60  # wall: this machine is shared; the CPU time is the cost
    assert exc.value.parser["cpu_s"] < 5 and exc.value.parser["peak_rss_bytes"] < 300 << 20
    # a file over the size cap: refused before any parser starts
    big = tmp_path / "big.xplane.pb"
    with open(big, "wb") as f:
        f.truncate(xplane.MAX_FILE_BYTES + 1)
    t = time.monotonic()
    with pytest.raises(xplane.TraceError, match="over the cap"):
        xplane.parse_in_subprocess(str(big), ["cand"], "cpu")
    assert time.monotonic() - t < 1


@pytest.mark.parametrize(
    "cap, value, message",
    [
        ("MAX_EVENTS", 3 * 400 + 3 * 3, "events in the trace"),  # 3 lines: their 3 header fields each
        ("MAX_EVENTS_PER_LINE", 400 + 3, "events in a line"),
        ("MAX_DECODED_FIELDS", 1200 * 14, "fields in the program's events"),
        ("MAX_EVENT_FIELDS", 10, "an event has more than"),
    ],
)
def test_a_trace_at_a_cap_parses_and_one_past_it_does_not(monkeypatch, cap, value, message):
    # 1200 events in lines of 400, each 14 decoded fields (10 of its own + 2 stats of 2) and 10
    # fields of its own
    data = bench.synthetic_trace(1200, per_line=400, fields_per_event=14, runs=4)
    monkeypatch.setattr(xplane, cap, value)
    got = xplane.select_programs(xplane.XSpace(data), ["cand", "base"], "cpu")
    assert [len(got[n].durations_s) for n in ("cand", "base")] == [4, 4]
    monkeypatch.setattr(xplane, cap, value - 1)
    with pytest.raises(xplane.TraceError, match=message):
        xplane.select_programs(xplane.XSpace(data), ["cand", "base"], "cpu")


def test_an_event_over_the_byte_cap_is_refused(monkeypatch):
    data = bench.synthetic_trace(10, per_line=10, fields_per_event=10, event_bytes=100, runs=1)
    monkeypatch.setattr(xplane, "MAX_EVENT_BYTES", 99)
    with pytest.raises(xplane.TraceError, match="an event of 100 bytes"):
        xplane.XSpace(data)
    monkeypatch.setattr(xplane, "MAX_EVENT_BYTES", 100)
    assert xplane.XSpace(data).n_events == 10


@pytest.mark.slow
def test_the_worst_trace_under_the_caps_parses_within_limits(tmp_path):
    """benchmarks/trace_parse.py's worst case: the parser's CPU time and memory stay within the
    target (its wall time depends on the machine's load)."""
    path = tmp_path / "worst.xplane.pb"
    path.write_bytes(bench.worst_case())
    assert os.path.getsize(path) <= xplane.MAX_FILE_BYTES
    summary = xplane.parse_in_subprocess(str(path), ["cand", "base"], "cpu", expected=55)
    assert summary.n_events > xplane.MAX_EVENTS - 100
    assert [len(summary.executions(n).durations_s) for n in ("cand", "base")] == [55, 55]
    assert summary.parser["cpu_s"] < 5 and summary.parser["peak_rss_bytes"] < 300 << 20


def test_a_program_with_too_many_executions_is_refused_alone(monkeypatch):
    data = bench.synthetic_trace(1200, per_line=400, fields_per_event=9, runs=4, programs=("cand",))
    space = xplane.XSpace(data)
    monkeypatch.setattr(xplane, "MAX_EXECUTIONS", 3)
    got = xplane.select_programs(space, ["cand", "base"], "cpu")
    assert isinstance(got["cand"], xplane.TraceError) and "more than 3 executions" in str(got["cand"])
    assert got["base"].durations_s == []  # the other program's answer stands
    monkeypatch.setattr(xplane, "MAX_EXECUTIONS", 4)
    assert len(xplane.program_executions(space, "cand", "cpu").durations_s) == 4


def test_the_harness_trace_cap_is_the_readers():
    from jaxbench.harness import settings

    assert settings.TRACE_CAP == xplane.MAX_FILE_BYTES


def test_a_program_event_time_out_of_range_is_refused():
    f = bench.field

    def trace(offset):
        stats = f(4, f(1, 1) + f(7, 3)) + f(4, f(1, 2) + f(4, 7))  # hlo_module = jit_cand, run_id 7
        ev = f(1, 1) + f(2, offset % (1 << 64)) + f(3, 1000) + stats
        line = f(2, b"tf_XLAEigen/0") + f(3, 10**18) + f(4, ev)
        plane = f(2, b"/host:CPU") + f(3, line) + bench._metadata(5, {1: "hlo_module", 2: "run_id", 3: "jit_cand"})
        return f(1, plane)

    assert xplane.program_executions(xplane.XSpace(trace(5000)), "cand", "cpu").durations_s == [1e-9]
    for offset in (-(1 << 63), 1 << 62):  # abs() of the first is itself: compared, not abs()ed
        with pytest.raises(xplane.TraceError, match="out of range"):
            xplane.program_executions(xplane.XSpace(trace(offset)), "cand", "cpu")


def test_empty_events_and_stats_select_nothing():
    f = bench.field
    for events in (f(4, b""), f(4, b"") + f(4, f(4, b""))):  # an empty event; an event with an empty stat
        line = f(2, b"tf_XLAEigen/0") + f(3, 10**18) + events
        plane = f(2, b"/host:CPU") + f(3, line) + bench._metadata(5, {1: "hlo_module", 2: "run_id", 3: "jit_cand"})
        assert xplane.program_executions(xplane.XSpace(f(1, plane)), "cand", "cpu").durations_s == []


# --------------------------------------------------------------------------- one process, rounds


def test_one_parser_process_serves_every_round_and_answers_as_a_fresh_one(real_trace, tmp_path):
    fresh = xplane.parse_in_subprocess(str(real_trace), ["cand", "base"], "cpu", expected=55)
    bloated = tmp_path / "bloated.xplane.pb"
    n = xplane.MAX_EVENTS_PER_LINE + 1
    bloated.write_bytes(bench.synthetic_trace(n, per_line=n, fields_per_event=9))
    fd = os.open(real_trace, os.O_RDONLY)
    with TraceParser() as parser:
        for _ in range(3):
            got = parser.parse(fd, ["cand", "base"], "cpu", expected=55)
            assert got.programs == fresh.programs and got.n_events == fresh.n_events
            assert got.window_ns == fresh.window_ns
            os.fstat(fd)  # the caller's descriptor stays open
        # a trace the reader refuses is the trace's answer; the process stays
        with pytest.raises(xplane.TraceError, match="events in a line"):
            parser.parse(str(bloated), ["cand"], "cpu")
        assert parser.parse(str(real_trace), ["cand"], "cpu").executions("cand") == fresh.executions("cand")
        assert parser.started == 1
    os.close(fd)


def test_a_limit_in_a_reused_parser_is_a_fresh_processs_verdict(real_trace, tmp_path):
    mid = tmp_path / "mid.xplane.pb"  # 77 MiB: ~255 MiB of address space to parse
    mid.write_bytes(bench.synthetic_trace(800_000, per_line=200_000, fields_per_event=10, event_bytes=100))
    with TraceParser(mem_bytes=200 << 20) as parser:  # the real trace needs ~160 MiB
        assert len(parser.parse(str(real_trace), ["cand"], "cpu").executions("cand").durations_s) == 55
        # out of memory in the process that had served: parsed again in a fresh one, which
        # says the same; the failed processes are gone and the next request starts another
        with pytest.raises(xplane.TraceError, match="within limits .*out of memory"):
            parser.parse(str(mid), ["cand"], "cpu")
        assert parser.started == 2
        assert len(parser.parse(str(real_trace), ["cand"], "cpu").executions("cand").durations_s) == 55
        assert parser.started == 3
    with TraceParser() as parser:  # within the default limits the same trace parses
        assert len(parser.parse(str(mid), ["cand"], "cpu").executions("cand").durations_s) == 55
        # a starved parser (wall time out, CPU to spare) is the host's failure, also when reused
        parser.wall_s = 0.001
        with pytest.raises(xplane.ParserStarved, match="too busy to parse"):
            parser.parse(str(real_trace), ["cand"], "cpu")
