"""A small, capped reader for the profiler's ``*.xplane.pb`` files (trusted side).

The trace is written by the sandboxed child, so it is hostile input. This module decodes the
protobuf wire format itself (no generated protobuf classes, no pickles, nothing evaluated),
with caps on the file size, the number of planes/lines/events and the length of every string,
and selects the candidate's own program by the name the harness chose.

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
"""

from __future__ import annotations

import array
import bisect
import dataclasses
import os
import re
import stat as _st
import struct

MAX_FILE_BYTES = 512 << 20  # an xplane.pb larger than this is rejected
# events scanned over all planes: interpret-mode Pallas kernels on CPU trace every op of every
# grid step (Tokamax's splash attention at the small profile: ~6 M for 50 calls); an event is
# kept as two 8-byte offsets, so the cap bounds the reader's memory at about 0.65 GB
MAX_EVENTS = 40_000_000
MAX_PLANES = 4096
MAX_LINES = 65536
MAX_STRING = 1 << 16  # names longer than this are truncated


class TraceError(ValueError):
    """The trace is missing, malformed, over a cap, or does not hold what was expected."""


# --------------------------------------------------------------------------- wire format


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
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


def _fields(buf: bytes, pos: int, end: int, overrun: str | None = "truncated fixed{bits}"):
    """Yield (field_number, wire_type, a, b) over the fields of one message, ``buf[pos:end]``:
    the one loop over the wire format in this module.

    For a varint (wire type 0) ``a`` is its value (unsigned; ``b`` is 0); for a
    length-delimited (2) or fixed-width (1: 8 bytes, 5: 4 bytes) field, ``buf[a:b]`` is the
    payload, decoded by the caller. A fixed-width field that runs past ``end`` raises
    ``overrun`` (``{bits}``: its width), or with ``overrun=None`` is yielded as it stands and
    ends the message. Single-byte keys, values and lengths are decoded inline: this runs once
    per field of every event of the trace."""
    while pos < end:
        key = buf[pos]
        pos += 1
        if key >= 0x80:
            key, pos = _varint(buf, pos - 1, end)
        wtype = key & 7
        if wtype == 2:
            n = buf[pos] if pos < end else 0x80
            if n < 0x80:
                pos += 1
            else:
                n, pos = _varint(buf, pos, end)
            if n > end - pos:
                raise TraceError("length-delimited field past the end")
            yield key >> 3, 2, pos, pos + n
            pos += n
        elif wtype == 0:
            val = buf[pos] if pos < end else 0x80
            if val < 0x80:
                pos += 1
            else:
                val, pos = _varint(buf, pos, end)
            yield key >> 3, 0, val, 0
        elif wtype == 1 or wtype == 5:
            width = 8 if wtype == 1 else 4
            if pos + width > end and overrun is not None:
                raise TraceError(overrun.format(bits=8 * width))
            yield key >> 3, wtype, pos, pos + width
            pos += width
        else:
            raise TraceError(f"unsupported wire type {wtype}")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= (1 << 63) else v


def _text(buf: bytes, s: int, e: int) -> str:
    return bytes(buf[s : min(e, s + MAX_STRING)]).decode("utf-8", "replace")


# --------------------------------------------------------------------------- model


@dataclasses.dataclass
class Event:
    name: str
    start_ps: int  # absolute: line timestamp + offset
    duration_ps: int
    stats: dict

    @property
    def end_ps(self) -> int:
        return self.start_ps + self.duration_ps


class RawEvents:
    """The (start, end) byte ranges of a line's events, as two compact arrays."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts = array.array("q")
        self.ends = array.array("q")

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        return self.starts[i], self.ends[i]

    def __iter__(self):
        return zip(self.starts, self.ends)


@dataclasses.dataclass
class Line:
    name: str
    display_name: str
    timestamp_ns: int
    raw_events: RawEvents  # (start, end) slices into the buffer, decoded on demand


@dataclasses.dataclass
class Plane:
    name: str
    lines: list
    event_names: dict  # metadata id -> name
    stat_names: dict  # stat metadata id -> name
    stats: dict


class XSpace:
    """A decoded trace; events are decoded lazily and only where asked for."""

    def __init__(self, data: bytes):
        self.buf = bytes(data)
        self.planes: list[Plane] = []
        self._n_events = 0
        self._parse()

    # -- structure
    def _parse(self):
        buf = self.buf
        for field, wt, s, e in _fields(buf, 0, len(buf)):
            if field == 1 and wt == 2:
                if len(self.planes) >= MAX_PLANES:
                    raise TraceError("too many planes")
                self.planes.append(self._plane(s, e))

    def _plane(self, start, end) -> Plane:
        buf = self.buf
        name = ""
        lines: list[tuple[int, int]] = []
        ev_names: dict[int, str] = {}  # metadata id -> name
        st_names: dict[int | None, str] = {}  # looked up with None too (a stat without metadata id)
        raw_stats: list[tuple[int, int]] = []
        for field, wt, s, e in _fields(buf, start, end):
            if wt != 2:
                continue
            if field == 2:
                name = _text(buf, s, e)
            elif field == 3:
                if len(lines) >= MAX_LINES:
                    raise TraceError("too many lines")
                lines.append((s, e))
            elif field in (4, 5):
                key, val = None, None
                for f2, w2, a2, b2 in _fields(buf, s, e):
                    if f2 == 1 and w2 == 0:
                        key = _signed(a2)
                    elif f2 == 2 and w2 == 2:
                        val = (a2, b2)
                if key is None or val is None:
                    continue
                mname = ""
                for f3, w3, s3, e3 in _fields(buf, *val):
                    if f3 == 2 and w3 == 2:
                        mname = _text(buf, s3, e3)
                (ev_names if field == 4 else st_names)[key] = mname
            elif field == 6:
                raw_stats.append((s, e))
        plane = Plane(name, [], ev_names, st_names, {})
        for s, e in raw_stats:
            mid, val = self._stat(st_names, s, e, "truncated fixed{bits}")
            mid = None if mid is None else _signed(mid)
            plane.stats[st_names.get(mid, str(mid))] = val
        plane.lines = [self._line(s, e) for s, e in lines]
        return plane

    def _line(self, start, end) -> Line:
        buf = self.buf
        name = display = ""
        ts = 0
        events = RawEvents()
        add_start, add_end = events.starts.append, events.ends.append
        n_events = self._n_events
        for field, wt, a, b in _fields(buf, start, end, "truncated line"):
            if wt == 2:
                if field == 4:
                    n_events += 1
                    add_start(a)
                    add_end(b)
                elif field == 2:
                    name = _text(buf, a, b)
                elif field == 11:
                    display = _text(buf, a, b)
            elif wt == 0 and field == 3:
                ts = _signed(a)
        self._n_events = n_events
        if n_events > MAX_EVENTS:
            raise TraceError(f"more than {MAX_EVENTS} events in the trace")
        return Line(name, display, ts, events)

    def event(self, plane: Plane, line: Line, raw: tuple[int, int]) -> Event:
        """Decode one event."""
        buf = self.buf
        mid = off = dur = 0
        stats = {}
        stat_names = plane.stat_names
        for field, wt, a, b in _fields(buf, *raw, "truncated event"):
            if wt == 0:
                if field == 1:
                    mid = _signed(a)
                elif field == 2:
                    off = _signed(a)
                elif field == 3:
                    dur = _signed(a)
            elif wt == 2 and field == 4:
                smid, val = self._stat(stat_names, a, b)
                stats["" if smid is None else stat_names.get(_signed(smid), str(smid))] = val
        return Event(plane.event_names.get(mid, ""), line.timestamp_ns * 1000 + off, dur, stats)

    def _stat(self, stat_names, pos, end, overrun=None):
        """(metadata id as stored or None, value) of one XStat. Within an event, a double cut
        short by the end of its stat is read from the bytes after it (``overrun`` None)."""
        buf = self.buf
        mid, val = None, None
        for field, wt, a, b in _fields(buf, pos, end, overrun):
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

    def stat_id(self, plane: Plane, name: str):
        for k, v in plane.stat_names.items():
            if v == name:
                return k
        return None

    def events_containing(self, plane: Plane, needles):
        """Events of ``plane`` whose serialised bytes contain one of ``needles``, decoded
        (see :meth:`raw_events_containing`)."""
        for line, raw in self.raw_events_containing(plane, needles):
            yield line, self.event(plane, line, raw)

    def raw_events_containing(self, plane: Plane, needles):
        """(line, (start, end)) of the events of ``plane`` whose serialised bytes contain one
        of ``needles``, undecoded.

        A fast prefilter: each needle is searched over a whole line's byte range (C-level
        ``bytes.find``) and every hit is mapped to its event by bisection."""
        find = self.buf.find
        for line in plane.lines:
            raws = line.raw_events
            if not len(raws):
                continue
            starts = raws.starts
            lo, hi = raws[0][0], raws[len(raws) - 1][1]
            hits = set()
            for nd in needles:
                pos = find(nd, lo, hi)
                while pos >= 0:
                    i = bisect.bisect_right(starts, pos) - 1
                    if i >= 0 and pos + len(nd) <= raws[i][1]:
                        hits.add(i)
                        pos = find(nd, raws[i][1], hi)
                    else:
                        pos = find(nd, pos + 1, hi)
            for i in sorted(hits):
                yield line, raws[i]

    def event_core(self, line: Line, raw: tuple[int, int], wanted: dict, stat_names: dict):
        """(start_ps, duration_ps, {name: value}) of one event, decoding only the stats whose
        metadata id is in ``wanted`` (id -> name): the hot path of program selection."""
        buf = self.buf
        off = dur = 0
        stats = {}
        for field, wt, a, b in _fields(buf, *raw, "truncated event"):
            if wt == 0:
                if field == 2:
                    off = _signed(a)
                elif field == 3:
                    dur = _signed(a)
            elif wt == 2 and field == 4 and b - a >= 2 and buf[a] == 0x08:
                mid, _ = _varint(buf, a + 1, b)
                name = wanted.get(mid)
                if name is not None:
                    stats[name] = self._stat(stat_names, a, b)[1]
        return line.timestamp_ns * 1000 + off, dur, stats

    def all_events(self, plane: Plane):
        for line in plane.lines:
            for raw in line.raw_events:
                yield line, self.event(plane, line, raw)

    @property
    def n_events(self) -> int:
        return self._n_events


# --------------------------------------------------------------------------- reading


def read_trace_file(path: str, *, max_bytes: int = MAX_FILE_BYTES) -> XSpace:
    """Read one xplane.pb file (no symlinks, regular file, under ``max_bytes``)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise TraceError(f"cannot open trace: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not _st.S_ISREG(st.st_mode):
            raise TraceError("trace is not a regular file")
        if st.st_size > max_bytes:
            raise TraceError(f"trace file is {st.st_size} bytes, over the cap of {max_bytes}")
        chunks, total = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            total += len(b)
            if total > max_bytes:
                raise TraceError("trace file grew past the cap while reading")
            chunks.append(b)
    finally:
        os.close(fd)
    return XSpace(b"".join(chunks))


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
    module = f"jit_{program_name}"
    if platform == "cpu":
        planes = [p for p in space.planes if p.name == "/host:CPU"]
        if len(planes) != 1:
            raise TraceError("the trace has no single /host:CPU plane")
        return _grouped(space, planes[0], module, "cpu_thunk_span")
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
    rx = _module_name_re(module)
    for line in plane.lines:
        if line.name == "XLA Modules" or line.display_name == "XLA Modules":
            evs = []
            for raw in line.raw_events:
                ev = space.event(plane, line, raw)
                if rx.match(ev.name):
                    evs.append(ev)
            evs.sort(key=lambda e: e.start_ps)
            return Executions(
                [e.duration_ps * 1e-12 for e in evs], [e.start_ps for e in evs], "device_xla_module", plane.name
            )
    if platform == "gpu":
        return _gpu_kernel_sequence(space, plane, module, expected)
    return _grouped(space, plane, module, "device_kernel_span")


def _gpu_kernel_sequence(space, plane, module, expected) -> Executions:
    kernels = []  # (start, end, kernel name, run_id): a few per execution, decoded whole
    for _line, ev in space.events_containing(plane, _needles(plane, module)):
        if ev.stats.get("hlo_module") == module:
            kernels.append((ev.start_ps, ev.end_ps, ev.name, ev.stats.get("run_id")))
    if not kernels:
        return Executions([], [], "gpu_kernel_sequence", plane.name)
    kernels.sort(key=lambda k: (k[0], k[1]))
    if all(k[3] is not None for k in kernels):
        runs: dict = {}
        for s, e, _, rid in kernels:
            lo, hi = runs.get(rid, (s, e))
            runs[rid] = (min(lo, s), max(hi, e))
        spans = sorted(runs.values())
        return Executions([(e - s) * 1e-12 for s, e in spans], [s for s, _ in spans], "device_kernel_span", plane.name)
    if not expected or len(kernels) % expected:
        raise TraceError(
            f"{len(kernels)} kernel events of {module} on {plane.name} do not split into {expected} executions"
        )
    per = len(kernels) // expected
    groups = [kernels[i * per : (i + 1) * per] for i in range(expected)]
    first = [k[2] for k in groups[0]]
    for g in groups[1:]:
        if [k[2] for k in g] != first:
            raise TraceError(f"the kernels of {module} on {plane.name} do not repeat one sequence per execution")
    spans = [(g[0][0], max(k[1] for k in g)) for g in groups]
    for (_, e), (s, _) in zip(spans, spans[1:]):
        if s < e:  # executions run one after another on the device; overlap means a bad split
            raise TraceError(f"the kernel groups of {module} on {plane.name} overlap")
    return Executions([(e - s) * 1e-12 for s, e in spans], [s for s, _ in spans], "gpu_kernel_sequence", plane.name)


def _encode_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _needles(plane: Plane, module: str) -> list:
    """Byte patterns of an ``hlo_module == module`` stat: the string itself, or (interned)
    XStat{metadata_id: <hlo_module>, ref_value: <module>} = 0x08 id 0x38 ref."""
    needles = [module.encode()]
    hid = [k for k, v in plane.stat_names.items() if v == "hlo_module"]
    rid = [k for k, v in plane.stat_names.items() if v == module]
    for h in hid:
        for r in rid:
            if h >= 0 and r >= 0:
                needles.append(b"\x08" + _encode_varint(h) + b"\x38" + _encode_varint(r))
    return needles


def _grouped(space, plane, module, method) -> Executions:
    runs: dict = {}
    ids = {k: v for k, v in plane.stat_names.items() if v in ("hlo_module", "run_id", "correlation_id")}
    for line, raw in space.raw_events_containing(plane, _needles(plane, module)):
        start, dur, stats = space.event_core(line, raw, ids, plane.stat_names)
        if stats.get("hlo_module") != module:
            continue
        rid = stats.get("run_id", stats.get("correlation_id"))
        if rid is None:
            raise TraceError("a program event has no run_id")
        lo, hi = runs.get(rid, (None, None))
        s, e = start, start + dur
        runs[rid] = (s if lo is None else min(lo, s), e if hi is None else max(hi, e))
    spans = sorted(runs.values())
    return Executions([(e - s) * 1e-12 for s, e in spans], [s for s, _ in spans], method, plane.name)
