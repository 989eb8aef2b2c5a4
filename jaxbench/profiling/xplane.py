"""A small, capped reader for the profiler's ``*.xplane.pb`` files (trusted side).

The trace is written by a sandboxed child that runs an untrusted program, so it is hostile
input: a program can execute a huge number of tiny ops to bloat it. This module decodes the
protobuf wire format itself (no generated protobuf classes, no pickles, nothing evaluated),
with caps on the file size, the number of planes, lines, metadata entries and events (in the
trace and per line), the bytes and fields of every event and stat and the length of every
string, and selects the candidate's own program by the name the harness chose. The harness
runs it in a separate, resource-limited process (:func:`parse_in_subprocess`): even a trace
built to be slow to parse costs the trusted side a bounded time and memory, and an over-limit
parse is the candidate's ``trace_invalid``.

The messages (tsl/profiler/protobuf/xplane.proto), only the fields used here::

    XSpace          { repeated XPlane planes = 1; }
    XPlane          { int64 id = 1; string name = 2; repeated XLine lines = 3;
                      map<int64, XEventMetadata> event_metadata = 4;
                      map<int64, XStatMetadata> stat_metadata = 5; repeated XStat stats = 6; }
    XLine           { int64 id = 1; string name = 2; int64 timestamp_ns = 3;
                      repeated XEvent events = 4; int64 duration_ps = 9;
                      string display_name = 11; }
    XEvent          { int64 metadata_id = 1; int64 offset_ps = 2; int64 duration_ps = 3;
                      repeated XStat stats = 4; int64 num_occurrences = 5; }
    XStat           { int64 metadata_id = 1; double double_value = 2; uint64 uint64_value = 3;
                      int64 int64_value = 4; string str_value = 5; bytes bytes_value = 6;
                      uint64 ref_value = 7; }
    XEventMetadata  { int64 id = 1; string name = 2; string display_name = 4; }
    XStatMetadata   { int64 id = 1; string name = 2; }

How it decodes: planes, lines, metadata and plane stats are walked in Python (few); the byte
range of every event is found by one tight loop per line; then only the events of the plane
that matters are decoded, vectorised with numpy a chunk of events at a time, field position
by field position (every event's first field, then every event's second field, ...), and
their stats the same way. The memory is the file (mapped, its pages released as they are
passed, :func:`summarize_fd`), 8 bytes per event for the ranges and one chunk's arrays.

How a program execution is found, per platform:

* CPU (``/host:CPU`` plane): the XLA CPU runtime emits one event per executed thunk, each with
  the stats ``hlo_module`` (``jit_<name>``) and ``run_id``. One execution of the program is the
  set of thunk events sharing a ``run_id``; its time is the span from the first thunk's start
  to the last thunk's end (dispatch from Python is excluded).
* TPU (``/device:TPU:*`` planes): the ``XLA Modules`` line holds one event per program
  execution named ``jit_<name>(<program id>)``; where that line is absent, kernel events with
  an ``hlo_module`` stat are grouped by ``run_id`` (or ``correlation_id``) as on CPU.
* GPU (``/device:GPU:*`` planes, CUPTI's activity records): one event per kernel (and copy,
  memset) on ``Stream #N`` lines, with the stats XLA's launch annotation carries
  (``hlo_module``, ``hlo_op``, ``program_id``) and a ``correlation_id`` that is per launch, not
  per execution. Kernel events of the module are grouped by ``run_id`` where every one has it;
  otherwise, in start order, into the ``expected`` executions the child ran: each execution of
  a compiled XLA GPU program launches the same sequence of kernels, which is checked (the same
  count and names in every group) before the span of each group is taken as its device time.
  Host planes are never used: their events time the launches, not the kernels.

An event's stat is named by its first field, the ``metadata_id`` (as the profiler writes it;
a stat that starts otherwise is not read); its value is its last value field; of several
stats of one name in an event, the last counts. A ``run_id`` (or ``correlation_id``) that groups
a program's events must be an integer.
"""

from __future__ import annotations

import array
import dataclasses
import errno
import mmap
import os
import re
import stat as _st
import struct

import numpy as np

# The caps, from real traces of what a timer child writes (5 warm-up + 50 timed calls of the
# candidate's program and of the XLA baseline, CPU, small profile; benchmarks/trace_parse.py
# --real measures them): XLA baselines 0.2-1.2 MB and 2-4 k events (7p: 10.6 MB, 176 k; 11p:
# 8 MB, 123 k); Pallas kernels lowered through the generic interpreter (a fori_loop per grid,
# every op of every step a thunk event): 1p example 10.6 MB / 223 k events (116 k on one line),
# 2p expert 12 MB / 254 k, 6p expert 64 MB / 1.13 M events, 684 k on one line, 12 M fields
# decoded, at 47-60 bytes an event. The caps leave 2-2.7x over the largest (6p); the worst trace
# under them (every cap filled at once, every event decoded) parses in about 2 s of CPU and
# 120 MiB (docs/DESIGN.md, "Parsing the profiler trace"; benchmarks/trace_parse.py).
MAX_FILE_BYTES = 128 << 20  # an xplane.pb larger than this is rejected
MAX_EVENTS = 2_500_000  # events over all planes (8 bytes of ranges each while parsing)
MAX_EVENTS_PER_LINE = 1_500_000  # fields of one line (events and the rest)
MAX_EVENT_BYTES = 4096  # one serialised event (real ones: under 700 bytes)
MAX_EVENT_FIELDS = 48  # fields of one event: its ids, times and stats (real ones: up to 12)
MAX_STAT_FIELDS = 8  # fields of one stat (an id and a value: 2)
MAX_PLANES = 64
MAX_LINES = 4096  # lines over all planes
MAX_METADATA = 1 << 15  # event and stat metadata entries over all planes
MAX_PLANE_STATS = 4096  # stats of one plane
MAX_STRUCT_FIELDS = 1 << 18  # fields decoded one by one in Python (everything but the events)
MAX_DECODED_FIELDS = 32_000_000  # fields of the events (and their stats) decoded, vectorised
MAX_STRING = 1 << 16  # names longer than this are truncated
MAX_EXECUTIONS = 10_000  # executions of one program (the child runs 55)
CHUNK_EVENTS = 1 << 16  # events decoded together (bounds the working arrays)
_TIME_LIMIT = 1 << 61  # |offset| and duration of a program event, in ps


class TraceError(ValueError):
    """The trace is missing, malformed, over a cap, or does not hold what was expected."""

    parser: dict | None = None  # the parser process's account (cpu_s, peak_rss_bytes...), where it answered


class ParserUnavailable(RuntimeError):
    """The parser process could not be started (the host's fault, not the trace's)."""


class ParserStarved(ParserUnavailable):
    """The parser ran out of wall time with CPU time to spare: the machine starved it (the
    host's fault, not the trace's; parsing again later settles it)."""


# --------------------------------------------------------------------------- wire format


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    if pos < end and buf[pos] < 0x80:
        return buf[pos], pos + 1
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise TraceError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise TraceError("varint too long")


def _field(buf, pos: int, end: int, overrun: str):
    """The field at ``pos`` (< ``end``): (field_number, wire_type, a, b, next position). For a
    varint (wire type 0) ``a`` is its value (unsigned); for a length-delimited (2) or
    fixed-width (1: 8 bytes, 5: 4 bytes) field, ``buf[a:b]`` is the payload. A fixed-width field
    past ``end`` raises ``overrun`` (``{bits}``: its width)."""
    key = buf[pos]
    pos += 1
    if key >= 0x80:
        key, pos = _varint(buf, pos - 1, end)
    wtype = key & 7
    if wtype == 2:
        n, pos = _varint(buf, pos, end)
        if n > end - pos:
            raise TraceError("length-delimited field past the end")
        return key >> 3, 2, pos, pos + n, pos + n
    if wtype == 0:
        val, pos = _varint(buf, pos, end)
        return key >> 3, 0, val, 0, pos
    if wtype == 1 or wtype == 5:
        width = 8 if wtype == 1 else 4
        if pos + width > end:
            raise TraceError(overrun.format(bits=8 * width))
        return key >> 3, wtype, pos, pos + width, pos + width
    raise TraceError(f"unsupported wire type {wtype}")


def _fields(buf, pos: int, end: int, budget: list, overrun: str = "truncated fixed{bits}"):
    """Yield (field_number, wire_type, a, b) over the fields of one message, ``buf[pos:end]``,
    each one spent from ``budget`` (a one-element list: the fields left to decode in Python)."""
    while pos < end:
        budget[0] -= 1
        if budget[0] < 0:
            raise TraceError(f"more than {MAX_STRUCT_FIELDS} fields outside events in the trace")
        f, wt, a, b, pos = _field(buf, pos, end, overrun)
        yield f, wt, a, b


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= (1 << 63) else v


def _text(buf, s: int, e: int) -> str:
    return bytes(buf[s : min(e, s + MAX_STRING)]).decode("utf-8", "replace")


# --------------------------------------------------------------------------- vectorised


_U64_7F = np.uint64(0x7F)


def _vvarint(u8, p, lim):
    """The varints at positions ``p`` (int64), each before its ``lim``: (values as uint64,
    positions after them)."""
    if np.any(p >= lim):
        raise TraceError("truncated varint")
    b = u8[p]
    val = (b & 0x7F).astype(np.uint64)
    q = p + 1
    more = np.flatnonzero(b >= 0x80)
    shift = 7
    while more.size:
        if shift > 63:
            raise TraceError("varint too long")
        pp = q[more]
        if np.any(pp >= lim[more]):
            raise TraceError("truncated varint")
        bb = u8[pp]
        val[more] |= (bb.astype(np.uint64) & _U64_7F) << np.uint64(shift)
        q[more] = pp + 1
        more = more[bb >= 0x80]
        shift += 7
    return val, q


def _walk(u8, starts, ends, max_fields: int, what: str, budget: list):
    """Decode the fields of many messages ``u8[starts[i]:ends[i]]`` together, field position
    by field position. Yields, per position, (indices of the messages that have a field there,
    field numbers, wire types, varint values (uint64, 0 elsewhere), payload starts, payload
    ends). Every field decoded is spent from ``budget`` (a one-element list)."""
    pos = starts.astype(np.int64)
    ends = ends.astype(np.int64)
    act = np.flatnonzero(pos < ends)
    step = 0
    while act.size:
        if step == max_fields:
            raise TraceError(f"{what} has more than {max_fields} fields")
        step += 1
        budget[0] -= act.size
        if budget[0] < 0:
            raise TraceError(f"more than {MAX_DECODED_FIELDS} fields in the program's events")
        lim = ends[act]
        key, p = _vvarint(u8, pos[act], lim)
        wt = (key & np.uint64(7)).astype(np.int8)
        fn = key >> np.uint64(3)
        if np.any((wt == 3) | (wt == 4) | (wt > 5)):
            raise TraceError(f"unsupported wire type {int(wt[(wt == 3) | (wt == 4) | (wt > 5)][0])}")
        val = np.zeros(act.size, np.uint64)
        a = p.copy()
        b = p.copy()
        m = np.flatnonzero(wt == 0)
        if m.size:
            val[m], p[m] = _vvarint(u8, p[m], lim[m])
        m = np.flatnonzero(wt == 2)
        if m.size:
            n, q = _vvarint(u8, p[m], lim[m])
            if np.any(n > (lim[m] - q).astype(np.uint64)):
                raise TraceError("length-delimited field past the end")
            a[m] = q
            b[m] = p[m] = q + n.astype(np.int64)
        m = np.flatnonzero((wt == 1) | (wt == 5))
        if m.size:
            e = p[m] + np.where(wt[m] == 1, 8, 4)
            if np.any(e > lim[m]):
                raise TraceError(f"truncated fixed-width field in {what}")
            b[m] = p[m] = e
        yield act, fn, wt, val, a, b
        pos[act] = p
        act = act[p < lim]


@dataclasses.dataclass
class _StatColumn:
    """The last stat of one name in each of a chunk's events: ``kind`` 0 none, 1 no value,
    2 integer (``v``), 3 ref (``v``: a stat metadata id), 4 string or bytes (``u8[sa:sb]``),
    5 double."""

    kind: np.ndarray
    v: np.ndarray
    sa: np.ndarray
    sb: np.ndarray


_NONE, _NOVALUE, _INT, _REF, _STR, _DOUBLE = range(6)


# --------------------------------------------------------------------------- model


@dataclasses.dataclass
class Line:
    name: str
    display_name: str
    timestamp_ns: int
    starts: array.array  # byte ranges of the events, decoded on demand
    ends: array.array

    def __len__(self):
        return len(self.starts)


@dataclasses.dataclass
class Plane:
    name: str
    lines: list
    event_names: dict  # metadata id -> name
    stat_names: dict  # stat metadata id -> name
    stats: dict


class XSpace:
    """A trace over ``data`` (bytes, or a read-only mmap: nothing is copied); its structure is
    read at once, the events of a plane only where asked for. ``release(lo, hi)``, if given, is
    called for every byte range the reader has done with (the caller may drop its pages)."""

    def __init__(self, data, release=None):
        self.buf = data
        self.u8 = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(0, np.uint8)
        self._release = release
        self._index = "I" if len(data) < (1 << 32) else "q"
        self.planes: list[Plane] = []
        self._n_events = 0
        self._n_lines = 0
        self._n_meta = 0
        self._budget = [MAX_STRUCT_FIELDS]
        self._decode_budget = [MAX_DECODED_FIELDS]
        self._n_line_fields = 0
        self._parse()

    # -- structure
    def _parse(self):
        buf = self.buf
        for field, wt, s, e in _fields(buf, 0, len(buf), self._budget):
            if field == 1 and wt == 2:
                if len(self.planes) >= MAX_PLANES:
                    raise TraceError(f"more than {MAX_PLANES} planes")
                self.planes.append(self._plane(s, e))

    def _plane(self, start, end) -> Plane:
        buf, budget = self.buf, self._budget
        name = ""
        lines: list[tuple[int, int]] = []
        ev_names: dict[int, str] = {}  # metadata id -> name
        st_names: dict[int | None, str] = {}  # looked up with None too (a stat without metadata id)
        raw_stats: list[tuple[int, int]] = []
        for field, wt, s, e in _fields(buf, start, end, budget):
            if wt != 2:
                continue
            if field == 2:
                name = _text(buf, s, e)
            elif field == 3:
                self._n_lines += 1
                if self._n_lines > MAX_LINES:
                    raise TraceError(f"more than {MAX_LINES} lines in the trace")
                lines.append((s, e))
            elif field in (4, 5):
                self._n_meta += 1
                if self._n_meta > MAX_METADATA:
                    raise TraceError(f"more than {MAX_METADATA} metadata entries in the trace")
                key, val = None, None
                for f2, w2, a2, b2 in _fields(buf, s, e, budget):
                    if f2 == 1 and w2 == 0:
                        key = _signed(a2)
                    elif f2 == 2 and w2 == 2:
                        val = (a2, b2)
                if key is None or val is None:
                    continue
                mname = ""
                for f3, w3, s3, e3 in _fields(buf, *val, budget):
                    if f3 == 2 and w3 == 2:
                        mname = _text(buf, s3, e3)
                (ev_names if field == 4 else st_names)[key] = mname
            elif field == 6:
                if len(raw_stats) >= MAX_PLANE_STATS:
                    raise TraceError(f"more than {MAX_PLANE_STATS} stats in a plane")
                raw_stats.append((s, e))
        plane = Plane(name, [], ev_names, st_names, {})
        for s, e in raw_stats:
            mid, val = self._stat(st_names, s, e)
            mid = None if mid is None else _signed(mid)
            plane.stats[st_names.get(mid, str(mid))] = val
        plane.lines = [self._line(s, e) for s, e in lines]
        return plane

    def _line(self, start, end) -> Line:
        """The line's header and the byte range of each of its events: the one Python loop run
        once per event of the trace."""
        buf = self.buf
        name = display = ""
        ts = 0
        starts, ends = array.array(self._index), array.array(self._index)
        add_start, add_end = starts.append, ends.append
        left = MAX_EVENTS - self._n_line_fields  # every field of every line counts as an event
        cap = min(MAX_EVENTS_PER_LINE, left)
        n = 0
        pos = start
        while pos < end:
            n += 1
            if n > cap:
                if cap == left:
                    raise TraceError(f"more than {MAX_EVENTS} events in the trace")
                raise TraceError(f"more than {MAX_EVENTS_PER_LINE} events in a line")
            if buf[pos] == 0x22:  # field 4 (an event), length-delimited: nearly every field
                ln = buf[pos + 1] if pos + 1 < end else 0x80
                if ln < 0x80:
                    s = pos + 2
                else:
                    ln, s = _varint(buf, pos + 1, end)
                pos = s + ln
                if pos > end:
                    raise TraceError("length-delimited field past the end")
                if ln > MAX_EVENT_BYTES:
                    raise TraceError(f"an event of {ln} bytes, over the cap of {MAX_EVENT_BYTES}")
                add_start(s)
                add_end(pos)
                continue
            field, wt, a, b, pos = _field(buf, pos, end, "truncated line")
            if wt == 2:
                if field == 4:
                    if b - a > MAX_EVENT_BYTES:
                        raise TraceError(f"an event of {b - a} bytes, over the cap of {MAX_EVENT_BYTES}")
                    add_start(a)
                    add_end(b)
                elif field == 2:
                    name = _text(buf, a, b)
                elif field == 11:
                    display = _text(buf, a, b)
            elif wt == 0 and field == 3:
                ts = _signed(a)
        self._n_events += len(starts)
        self._n_line_fields += n
        if self._release is not None:
            self._release(start, end)
        return Line(name, display, ts, starts, ends)

    def _stat(self, stat_names, pos, end):
        """(metadata id as stored or None, value) of one XStat (a plane's, decoded in Python)."""
        buf = self.buf
        mid, val = None, None
        for field, wt, a, b in _fields(buf, pos, end, self._budget):
            if wt == 0:
                if field == 1:
                    mid = a
                elif field == 7:
                    val = stat_names.get(a, "")
                elif field == 3:
                    val = a
                elif field == 4:
                    val = _signed(a)
            elif wt == 2:
                if field in (5, 6):
                    val = _text(buf, a, b)
            elif wt == 1 and field == 2:
                val = struct.unpack_from("<d", buf, a)[0]
        return mid, val

    def profile_window_ns(self):
        """(start, stop) of the profiling session in Unix-epoch ns, from the ``Task
        Environment`` plane; line timestamps are relative to the start. None if absent."""
        for p in self.planes:
            if p.name == "Task Environment":
                a, b = p.stats.get("profile_start_time"), p.stats.get("profile_stop_time")
                if isinstance(a, int) and isinstance(b, int) and 0 < a <= b:
                    return a, b
        return None

    @property
    def n_events(self) -> int:
        return self._n_events

    # -- events, vectorised
    def chunks(self, plane: Plane, line: Line, stat_names=()):
        """Decode the events of ``line`` a chunk at a time. Yields (metadata ids, offsets,
        durations (int64 arrays), {stat name: _StatColumn} for ``stat_names``)."""
        u8 = self.u8
        all_s = np.frombuffer(line.starts, dtype=np.uint32 if self._index == "I" else np.int64)
        all_e = np.frombuffer(line.ends, dtype=all_s.dtype)
        ids = {
            nm: np.array([k for k, v in plane.stat_names.items() if v == nm and k is not None], np.int64)
            for nm in stat_names
        }
        wanted = np.concatenate([np.zeros(0, np.int64), *ids.values()])
        for c0 in range(0, len(all_s), CHUNK_EVENTS):
            S = all_s[c0 : c0 + CHUNK_EVENTS].astype(np.int64)
            E = all_e[c0 : c0 + CHUNK_EVENTS].astype(np.int64)
            n = S.size
            mid, off, dur = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
            none = np.zeros(0, np.int64)
            st_ev, st_a, st_b = [none], [none], [none]  # no stat at all: empty, not missing
            for act, fn, wt, val, a, b in _walk(u8, S, E, MAX_EVENT_FIELDS, "an event", self._decode_budget):
                sv = val.view(np.int64)
                vz = wt == 0
                for f, arr in ((1, mid), (2, off), (3, dur)):
                    m = vz & (fn == f)
                    arr[act[m]] = sv[m]  # one field per event per position; later ones win
                m = (wt == 2) & (fn == 4)
                st_ev.append(act[m])
                st_a.append(a[m])
                st_b.append(b[m])
            cols = {}
            if stat_names:
                ev = np.concatenate(st_ev)
                A, B = np.concatenate(st_a), np.concatenate(st_b)
                # a stat is named by its first field, the metadata id (how the profiler writes
                # it); only the stats of the wanted names are decoded further
                cand = np.flatnonzero(B - A >= 2)
                cand = cand[u8[A[cand]] == 0x08]
                smid = _vvarint(u8, A[cand] + 1, B[cand])[0].view(np.int64)
                keep = np.isin(smid, wanted)
                cand = cand[keep]
                cols = self._stat_columns(ev[cand], A[cand], B[cand], smid[keep], n, ids)
            yield mid, off, dur, cols
            if self._release is not None and n:
                self._release(int(S[0]), int(E[-1]))

    def _stat_columns(self, ev, A, B, smid, n, ids: dict) -> dict:
        """The stats ``u8[A[i]:B[i]]`` of events ``ev[i]`` (in order within each event), whose
        metadata ids are ``smid``, as one _StatColumn per wanted name (``ids``: name -> its stat
        metadata ids). The value is the stat's last value field."""
        k = ev.size
        kind = np.full(k, _NOVALUE, np.int8)
        v = np.zeros(k, np.int64)
        sa = np.zeros(k, np.int64)
        sb = np.zeros(k, np.int64)
        for act, fn, wt, val, a, b in _walk(self.u8, A, B, MAX_STAT_FIELDS, "a stat", self._decode_budget):
            vz = wt == 0
            for fields, code in (((3, 4), _INT), ((7,), _REF)):
                m = vz & ((fn == fields[0]) | (fn == fields[-1]))
                kind[act[m]] = code
                v[act[m]] = val[m].view(np.int64)
            m = (wt == 2) & ((fn == 5) | (fn == 6))
            kind[act[m]] = _STR
            sa[act[m]] = a[m]
            sb[act[m]] = b[m]
            m = (wt == 1) & (fn == 2)
            kind[act[m]] = _DOUBLE
        cols = {}
        for nm, wanted in ids.items():
            col = _StatColumn(np.zeros(n, np.int8), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64))
            sel = np.flatnonzero(np.isin(smid, wanted))
            if sel.size:
                # the last stat of the name in each event: the first in reverse order
                rev = sel[::-1]
                _, first = np.unique(ev[rev], return_index=True)
                last = rev[first]
                e = ev[last]
                col.kind[e], col.v[e], col.sa[e], col.sb[e] = kind[last], v[last], sa[last], sb[last]
            cols[nm] = col
        return cols

    def module_index(self, plane: Plane, col: _StatColumn, modules: list[str]):
        """Per event, the index in ``modules`` of the module its ``hlo_module`` stat names
        (interned or as a string), -1 for none."""
        out = np.full(col.kind.size, -1, np.int32)
        for i, module in enumerate(modules):
            refs = np.array([k for k, nm in plane.stat_names.items() if nm == module and k is not None], np.int64)
            if refs.size:
                out[(col.kind == _REF) & np.isin(col.v, refs)] = i
            mb = np.frombuffer(module.encode(), np.uint8)
            c = np.flatnonzero((col.kind == _STR) & (col.sb - col.sa == mb.size))
            if c.size and mb.size:
                same = (self.u8[col.sa[c, None] + np.arange(mb.size)] == mb).all(axis=1)
                out[c[same]] = i
        return out

    def event_name_codes(self, plane: Plane, mids):
        """Per event, a code of its metadata name (equal names, equal codes; -1: no name)."""
        if not plane.event_names:
            return np.full(mids.size, -1, np.int64)
        codes: dict[str, int] = {"": -1}
        keys = np.array(sorted(plane.event_names), np.int64)
        vals = np.array([codes.setdefault(plane.event_names[int(k)], len(codes)) for k in keys], np.int64)
        pos = np.minimum(np.searchsorted(keys, mids), keys.size - 1)
        return np.where(keys[pos] == mids, vals[pos], -1)


# --------------------------------------------------------------------------- reading


def _open_trace(path: str, max_bytes: int) -> int:
    """A descriptor of the trace file at ``path``: no symlink, a regular file under the cap."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise TraceError(f"cannot open trace: {exc.strerror}") from None
    try:
        _check_fd(fd, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_fd(fd: int, max_bytes: int) -> int:
    st = os.fstat(fd)
    if not _st.S_ISREG(st.st_mode):
        raise TraceError("trace is not a regular file")
    if st.st_size > max_bytes:
        raise TraceError(f"trace file is {st.st_size} bytes, over the cap of {max_bytes}")
    if st.st_size == 0:
        raise TraceError("the trace file is empty")
    return st.st_size


def _map(fd: int, max_bytes: int):
    size = _check_fd(fd, max_bytes)
    try:
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    except OSError as exc:
        if exc.errno == errno.ENOMEM:  # the parser's address-space limit
            raise MemoryError(f"cannot map a trace of {size} bytes") from None
        raise TraceError(f"cannot map trace: {exc}") from None
    except ValueError as exc:
        raise TraceError(f"cannot map trace: {exc}") from None


def read_trace_file(path: str, *, max_bytes: int = MAX_FILE_BYTES) -> XSpace:
    """Map one xplane.pb file (no symlinks, regular file, under ``max_bytes``), in this
    process: for tests and tools. The harness uses :func:`parse_in_subprocess`."""
    fd = _open_trace(path, max_bytes)
    try:
        return XSpace(_map(fd, max_bytes))
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- selection


@dataclasses.dataclass
class Executions:
    durations_s: list  # one per execution, in start order
    starts_ps: list
    method: str  # "cpu_thunk_span", "device_xla_module", "device_kernel_span", "gpu_kernel_sequence"
    plane: str


def _module_name_re(module: str):
    return re.compile(r"^" + re.escape(module) + r"(\(\d+\))?$")


def program_executions(space: XSpace, program_name: str, platform: str, expected: int | None = None) -> Executions:
    """The executions of the program ``jit_<program_name>`` found in the trace; ``expected``:
    how many the child ran (needed on GPU, where kernel events carry no execution id)."""
    got = select_programs(space, [program_name], platform, expected)[program_name]
    if isinstance(got, TraceError):
        raise got
    return got


def select_programs(space: XSpace, names: list[str], platform: str, expected: int | None = None) -> dict:
    """:func:`program_executions` for several programs in one pass over the events: name ->
    Executions, or the TraceError of that program. A trace with no plane for the platform
    raises."""
    modules = [f"jit_{n}" for n in names]
    if platform == "cpu":
        planes = [p for p in space.planes if p.name == "/host:CPU"]
        if len(planes) != 1:
            raise TraceError("the trace has no single /host:CPU plane")
        res = _grouped(space, planes[0], modules, "cpu_thunk_span")
        return dict(zip(names, res))
    prefix = "/device:GPU:" if platform == "gpu" else "/device:"
    devs = [
        p
        for p in space.planes
        if p.name.startswith(prefix) and not p.name.startswith("/device:CUSTOM") and p.name != "/device:CPU"
    ]
    if not devs:
        raise TraceError(f"the trace has no device plane for platform {platform}")
    devs.sort(key=lambda p: (len(p.name), p.name))  # /device:GPU:10 after /device:GPU:2
    plane = devs[0]  # the child runs the program on its first device only
    for line in plane.lines:
        if line.name == "XLA Modules" or line.display_name == "XLA Modules":
            return dict(zip(names, _xla_modules(space, plane, line, modules)))
    if platform == "gpu":
        return dict(zip(names, _gpu_kernel_sequence(space, plane, modules, expected)))
    return dict(zip(names, _grouped(space, plane, modules, "device_kernel_span")))


def _check_times(off, dur):
    # compared, not abs()ed: abs of the most negative int64 is itself
    if np.any((off >= _TIME_LIMIT) | (off <= -_TIME_LIMIT) | (dur >= _TIME_LIMIT) | (dur <= -_TIME_LIMIT)):
        raise TraceError("a program event's time is out of range")


def _executions(spans: list, method: str, plane: str) -> Executions:
    spans.sort()
    return Executions([(e - s) * 1e-12 for s, e in spans], [s for s, _ in spans], method, plane)


def _xla_modules(space, plane, line, modules):
    out = []
    mids_of = [
        np.array([k for k, v in plane.event_names.items() if _module_name_re(m).match(v)], np.int64) for m in modules
    ]
    spans: list[list] = [[] for _ in modules]
    count = [0] * len(modules)
    base = line.timestamp_ns * 1000
    for mid, off, dur, _ in space.chunks(plane, line):
        for i, ids in enumerate(mids_of):
            sel = np.flatnonzero(np.isin(mid, ids))
            count[i] += sel.size
            if sel.size and count[i] <= MAX_EXECUTIONS:
                _check_times(off[sel], dur[sel])
                for o, d in zip(off[sel].tolist(), dur[sel].tolist()):
                    spans[i].append((base + o, base + o + d))
    for i in range(len(modules)):
        if count[i] > MAX_EXECUTIONS:
            out.append(TraceError(f"more than {MAX_EXECUTIONS} executions of {modules[i]}"))
            continue
        spans[i].sort(key=lambda se: se[0])
        out.append(
            Executions(
                [(e - s) * 1e-12 for s, e in spans[i]], [s for s, _ in spans[i]], "device_xla_module", plane.name
            )
        )
    return out


def _grouped(space, plane, modules, method) -> list:
    """Per module: its events grouped by run_id (or correlation_id), each group's span."""
    runs: list[dict] = [{} for _ in modules]
    errors: list[TraceError | None] = [None] * len(modules)
    names = ("hlo_module", "run_id", "correlation_id")
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        for _mid, off, dur, cols in space.chunks(plane, line, names):
            mod = space.module_index(plane, cols["hlo_module"], modules)
            idx = np.flatnonzero(mod >= 0)
            if not idx.size:
                continue
            run, corr = cols["run_id"], cols["correlation_id"]
            use_run = run.kind[idx] != _NONE
            kind = np.where(use_run, run.kind[idx], corr.kind[idx])
            key = np.where(use_run, run.v[idx], corr.v[idx])
            s = off[idx]
            _check_times(s, dur[idx])
            e = s + dur[idx]
            for i in range(len(modules)):
                sel = mod[idx] == i
                if not sel.any() or errors[i] is not None:
                    continue
                k = kind[sel]
                if np.any((k == _NONE) | (k == _NOVALUE)):
                    errors[i] = TraceError("a program event has no run_id")
                    continue
                if np.any(k != _INT):
                    errors[i] = TraceError("a program event's run_id is not an integer")
                    continue
                u, inv = np.unique(key[sel], return_inverse=True)
                lo = np.full(u.size, np.iinfo(np.int64).max, np.int64)
                hi = np.full(u.size, np.iinfo(np.int64).min, np.int64)
                np.minimum.at(lo, inv, s[sel])
                np.maximum.at(hi, inv, e[sel])
                if u.size > MAX_EXECUTIONS:
                    errors[i] = TraceError(f"more than {MAX_EXECUTIONS} executions of {modules[i]}")
                    continue
                for rid, a, b in zip(u.tolist(), lo.tolist(), hi.tolist()):
                    a, b = base + a, base + b
                    old = runs[i].get(rid)
                    runs[i][rid] = (a, b) if old is None else (min(old[0], a), max(old[1], b))
                if len(runs[i]) > MAX_EXECUTIONS:
                    errors[i] = TraceError(f"more than {MAX_EXECUTIONS} executions of {modules[i]}")
    return [err or _executions(list(r.values()), method, plane.name) for r, err in zip(runs, errors)]


def _gpu_kernel_sequence(space, plane, modules, expected) -> list:
    parts: list[list] = [[] for _ in modules]  # per module: (line base, starts, ends, names, run kinds, run ids)
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        for mid, off, dur, cols in space.chunks(plane, line, ("hlo_module", "run_id")):
            mod = space.module_index(plane, cols["hlo_module"], modules)
            idx = np.flatnonzero(mod >= 0)
            if not idx.size:
                continue
            _check_times(off[idx], dur[idx])
            codes = space.event_name_codes(plane, mid[idx])
            run = cols["run_id"]
            for i in range(len(modules)):
                mine = mod[idx] == i
                sel = idx[mine]
                if sel.size:
                    parts[i].append((base, off[sel], off[sel] + dur[sel], codes[mine], run.kind[sel], run.v[sel]))
    return [_gpu_one(p, m, plane.name, expected) for p, m in zip(parts, modules)]


def _gpu_one(parts, module, plane_name, expected):
    if not parts:
        return Executions([], [], "gpu_kernel_sequence", plane_name)
    zero = min(p[0] for p in parts)
    if any(p[0] - zero >= _TIME_LIMIT for p in parts):
        return TraceError(f"the lines of {plane_name} lie too far apart in time")
    s = np.concatenate([p[1] + (p[0] - zero) for p in parts])
    e = np.concatenate([p[2] + (p[0] - zero) for p in parts])
    names = np.concatenate([p[3] for p in parts])
    rkind = np.concatenate([p[4] for p in parts])
    rid = np.concatenate([p[5] for p in parts])
    order = np.lexsort((e, s))
    s, e, names, rkind, rid = s[order], e[order], names[order], rkind[order], rid[order]
    if np.all((rkind != _NONE) & (rkind != _NOVALUE)):
        if np.any(rkind != _INT):
            return TraceError("a program event's run_id is not an integer")
        u, inv = np.unique(rid, return_inverse=True)
        if u.size > MAX_EXECUTIONS:
            return TraceError(f"more than {MAX_EXECUTIONS} executions of {module}")
        lo = np.full(u.size, np.iinfo(np.int64).max, np.int64)
        hi = np.full(u.size, np.iinfo(np.int64).min, np.int64)
        np.minimum.at(lo, inv, s)
        np.maximum.at(hi, inv, e)
        spans = [(zero + a, zero + b) for a, b in zip(lo.tolist(), hi.tolist())]
        return _executions(spans, "device_kernel_span", plane_name)
    n = s.size
    if not expected or n % expected:
        return TraceError(f"{n} kernel events of {module} on {plane_name} do not split into {expected} executions")
    per = n // expected
    if np.any(names.reshape(expected, per) != names[:per]):
        return TraceError(f"the kernels of {module} on {plane_name} do not repeat one sequence per execution")
    g_start = s.reshape(expected, per)[:, 0]
    g_end = e.reshape(expected, per).max(axis=1)
    if np.any(g_start[1:] < g_end[:-1]):  # executions run one after another on the device
        return TraceError(f"the kernel groups of {module} on {plane_name} overlap")
    spans = [(zero + a, zero + b) for a, b in zip(g_start.tolist(), g_end.tolist())]
    return Executions([(b - a) * 1e-12 for a, b in spans], [a for a, _ in spans], "gpu_kernel_sequence", plane_name)


# --------------------------------------------------------------------------- the parser process

# The parser process's limits. Its address space holds the mapped file, Python and numpy and
# the working arrays (ranges of 8 bytes an event, one chunk's columns); its CPU time and wall
# time bound what any trace under the caps may cost (benchmarks/trace_parse.py: the worst one
# takes well under these).
PARSE_MEM_BYTES = MAX_FILE_BYTES + (448 << 20)
PARSE_CPU_S = 8
PARSE_WALL_S = 60.0
_LIMIT_MESSAGE = "trace too large or complex to parse within limits"


@dataclasses.dataclass
class TraceSummary:
    """What the harness needs from one trace, as the parser process answered it: per program
    its executions (or the TraceError that selecting it raised), the number of events and the
    profiling window. ``parser``: the parser process's own account (``wall_s``, ``cpu_s``,
    ``peak_rss_bytes``)."""

    programs: dict  # name -> Executions | TraceError
    n_events: int
    window_ns: tuple[int, int] | None
    parser: dict

    def executions(self, name: str) -> Executions:
        got = self.programs.get(name)
        if got is None:
            raise TraceError(f"program {name} was not asked of the trace parser")
        if isinstance(got, TraceError):
            raise got
        return got

    def profile_window_ns(self) -> tuple[int, int] | None:
        return self.window_ns


def summarize_fd(fd: int, names: list[str], platform: str, expected: int | None) -> dict:
    """The parser process's work (:mod:`.xplane_worker`): map the trace behind ``fd``, select
    the programs, answer a JSON-ready dict. The pages of the mapping are released as the reader
    passes them, so the resident memory stays near one chunk of the file."""
    mm = _map(fd, MAX_FILE_BYTES)
    page = mmap.PAGESIZE

    def release(lo: int, hi: int) -> None:
        lo -= lo % page
        if hi - lo >= page:
            mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    space = XSpace(mm, release=release if hasattr(mmap, "MADV_DONTNEED") else None)
    programs = {}
    for name, got in select_programs(space, names, platform, expected).items():
        if isinstance(got, TraceError):
            programs[name] = {"error": str(got)}
        else:
            programs[name] = dataclasses.asdict(got)
    window = space.profile_window_ns()
    return {
        "programs": programs,
        "n_events": space.n_events,
        "window_ns": list(window) if window else None,
    }


def parse_in_subprocess(
    path: str | int,
    names: list[str],
    platform: str,
    expected: int | None = None,
    *,
    mem_bytes: int = PARSE_MEM_BYTES,
    cpu_s: int = PARSE_CPU_S,
    wall_s: float = PARSE_WALL_S,
) -> TraceSummary:
    """Parse one trace in a parser process of its own (:class:`.parser_process.TraceParser`,
    which the harness keeps for the rounds of a timing phase; its ``parse`` says what is raised
    when). The parser (``python -I``, :mod:`.xplane_worker`) gets the descriptor, never the
    bytes, and runs under RLIMIT_AS ``mem_bytes``, RLIMIT_CPU ``cpu_s`` and a wall-clock timeout
    ``wall_s``."""
    from .parser_process import TraceParser  # deferred: the parser process imports this module

    with TraceParser(mem_bytes=mem_bytes, cpu_s=cpu_s, wall_s=wall_s) as parser:
        return parser.parse(path, names, platform, expected)
