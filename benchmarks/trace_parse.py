"""What parsing a profiler trace costs the trusted side: each trace through the parser process
(``xplane.parse_in_subprocess``), with its wall seconds, the parser's CPU seconds and peak
resident memory, and the trusted parent's peak resident memory. The target: the largest trace a
child may write (the worst one under the caps) under 5 s and 300 MB.

Cases:

* ``normal``: a real trace of what a timer child writes: an exported-and-deserialized jitted
  program and a plain-HLO ``lax.fori_loop`` of many steps (how the generic Pallas interpreter
  lowers a grid), 5 warm-up + 50 timed calls each, under the profiler session the child uses.
* ``worst``: a valid trace built at the caps: MAX_EVENTS events on the ``/host:CPU`` plane (lines
  of MAX_EVENTS_PER_LINE), every one a thunk event of a selected program (so every one is
  decoded), with as many fields as MAX_DECODED_FIELDS allows, padded to MAX_FILE_BYTES.
* ``over-events``, ``over-line``, ``over-fields``, ``over-file``: the same a little past one cap:
  rejected (TraceError), and how fast.
* ``--real``: also the real traces the caps come from (interpreted Pallas kernels: the 1p
  example and the 6p expert at the small profile; about a minute): size, events, parse cost.

``.venv/bin/python benchmarks/trace_parse.py [--real] [--only worst,normal]``
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxbench.profiling import xplane  # noqa: E402

# --------------------------------------------------------------------------- a tiny encoder


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num: int, payload) -> bytes:
    if isinstance(payload, int):
        return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def _metadata(num: int, names: dict) -> bytes:
    return b"".join(field(num, field(1, k) + field(2, field(1, k) + field(2, v.encode()))) for k, v in names.items())


def _env_plane(start_ns: int, stop_ns: int) -> bytes:
    env = field(2, b"Task Environment") + _metadata(5, {1: "profile_start_time", 2: "profile_stop_time"})
    env += field(6, field(1, 1) + field(4, start_ns)) + field(6, field(1, 2) + field(4, stop_ns))
    return field(1, env)


def synthetic_trace(
    n_events: int,
    *,
    per_line: int,
    fields_per_event: int = 10,
    event_bytes: int = 0,
    programs=("cand", "base"),
    runs: int = 55,
) -> bytes:
    """A valid CPU trace of ``n_events`` thunk events, all of the ``programs`` (alternating
    in blocks, ``runs`` executions each), in lines of ``per_line`` events. Every event has
    ``fields_per_event`` fields that the reader decodes (its id, offset, duration, the
    ``hlo_module`` and ``run_id`` stats (2 more fields each, decoded too), and fillers) and is
    padded with a string stat (never decoded) to ``event_bytes`` (0: no padding)."""
    fillers = fields_per_event - 9 - (1 if event_bytes else 0)  # the padding stat: one field
    assert fillers >= 0, "an event has at least 9 decoded fields (10 with padding)"
    head = field(1, 1)  # metadata id 1
    n_prog = len(programs)
    ev_per_run = max(1, n_events // (runs * n_prog))
    # fixed layout: offset as a 4-byte varint, so every event has the same length
    body_len = len(head) + 5 + 2 + 6 + 6 + 2 * fillers
    pad = 0
    if event_bytes:
        pad = event_bytes - body_len - 2  # the pad stat: 22 L | 08 09 2a L' <L' bytes>
        assert pad >= 4 + 1, "event_bytes too small to pad"
    ev_len = body_len + (2 + pad if pad else 0)
    assert ev_len < 128, "events stay under 128 bytes (one-byte length)"
    k = np.arange(n_events, dtype=np.int64)
    row = np.zeros((n_events, 2 + ev_len), np.uint8)
    col = 0

    def put(bs):
        nonlocal col
        row[:, col : col + len(bs)] = np.frombuffer(bs, np.uint8)
        col += len(bs)

    put(b"\x22" + bytes([ev_len]))
    put(head)
    put(b"\x10")
    off = (1 << 21) + (k * 1000) % ((1 << 28) - (1 << 21))  # ps, a 4-byte varint each
    for i in range(4):
        byte = (off >> (7 * i)) & 0x7F
        row[:, col] = byte | (0x80 if i < 3 else 0)
        col += 1
    put(b"\x18\x32")  # 50 ps
    prog = (k // ev_per_run) % n_prog
    put(b"\x22\x04\x08\x01\x38")
    row[:, col] = 3 + prog  # ref -> jit_<program>
    col += 1
    put(b"\x22\x04\x08\x02\x20")
    row[:, col] = 1 + (k // (ev_per_run * n_prog)) % runs
    col += 1
    for _ in range(fillers):
        put(b"\x28\x01")  # num_occurrences
    if pad:
        inner = pad  # 08 09 2a L' <L' bytes>
        put(b"\x22" + bytes([inner]) + b"\x08\x09\x2a" + bytes([inner - 4]))
        put(b"x" * (inner - 4))
    assert col == row.shape[1]
    stat_md = {1: "hlo_module", 2: "run_id", 9: "padding"}
    stat_md.update({3 + i: f"jit_{p}" for i, p in enumerate(programs)})
    plane = field(2, b"/host:CPU") + _metadata(4, {1: "fusion"}) + _metadata(5, stat_md)
    lines = []
    for i, lo in enumerate(range(0, n_events, per_line)):
        events = row[lo : lo + per_line].tobytes()
        header = field(1, i) + field(2, f"tf_XLAEigen/{i}".encode()) + field(3, 1_700_000_000_000_000_000)
        lines.append(field(3, header + events))
    plane += b"".join(lines)
    return field(1, plane) + _env_plane(1_700_000_000_000_000_000, 1_700_000_000_000_000_000 + 10**10)


def worst_case() -> bytes:
    """The dearest trace under every cap: MAX_EVENTS events in full lines, each with the most
    decoded fields MAX_DECODED_FIELDS leaves, padded to just under MAX_FILE_BYTES."""
    n = xplane.MAX_EVENTS - 64  # room for the lines' own fields
    per_event = xplane.MAX_DECODED_FIELDS // n
    size = (xplane.MAX_FILE_BYTES - (64 << 10)) // n - 2  # an event's own field header: 2 bytes
    return synthetic_trace(n, per_line=xplane.MAX_EVENTS_PER_LINE - 16, fields_per_event=per_event, event_bytes=size)


def over_cases() -> dict:
    n = xplane.MAX_EVENTS - 64
    per_event = xplane.MAX_DECODED_FIELDS // n
    return {
        "over-events": lambda: synthetic_trace(
            xplane.MAX_EVENTS + 1, per_line=xplane.MAX_EVENTS_PER_LINE - 16, fields_per_event=9
        ),
        "over-line": lambda: synthetic_trace(
            xplane.MAX_EVENTS_PER_LINE + 1, per_line=xplane.MAX_EVENTS_PER_LINE + 1, fields_per_event=9
        ),
        "over-fields": lambda: synthetic_trace(
            n, per_line=xplane.MAX_EVENTS_PER_LINE - 16, fields_per_event=per_event + 1
        ),
        "over-file": None,  # MAX_FILE_BYTES + 1 bytes: refused before the parser starts
    }


# --------------------------------------------------------------------------- real traces


def real_trace(kind: str) -> bytes:
    """A real trace as a timer child writes it: the program exported and deserialized, 5
    warm-up and 50 timed calls under the child's profiler session (``_Profiler``)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    from jax._src.lib import _profiler

    from jaxbench import workloads

    def exported(fn, args, name):
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
        exp = jax.export.deserialize(bytearray(jax.export.export(jax.jit(fn), platforms=["cpu"])(*specs).serialize()))

        def call(*a):
            return exp.call(*a)

        call.__name__ = name
        return jax.jit(call).lower(*args).compile()

    progs = []
    if kind == "normal":
        wl = workloads.get("12p")
        args = wl.create_inputs("small", 0)
        progs.append((exported(wl.baseline("small"), args, "base"), args))

        def loop(x):  # a plain-HLO loop of many small steps, as the generic interpreter emits
            return jax.lax.fori_loop(0, 512, lambda i, a: jnp.tanh(a) * 0.5 + a[::-1] * 0.25, x)

        x = jnp.ones((256, 128), jnp.float32)
        progs.append((exported(loop, (x,), "cand"), (x,)))
    else:
        wid, folder = {"1p-example": ("1p", "examples"), "6p-expert": ("6p", "experts")}[kind]
        import importlib.util

        from jax.experimental import pallas as pl

        generic = pl.pallas_call

        def interpreted(*a, **k):  # the generic Pallas interpreter: plain HLO, no callbacks
            k["interpret"] = True
            return generic(*a, **k)

        pl.pallas_call = interpreted
        wl = workloads.get(wid)
        args = wl.create_inputs("small", 0)
        path = next((ROOT / "jaxbench" / "kernels" / folder).glob(f"{wid}-*.py"))
        pkg = f"jaxbench.kernels.{folder}"
        importlib.import_module(pkg)
        spec = importlib.util.spec_from_file_location(f"{pkg}.bench_{wid}", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        mod.__package__ = pkg
        spec.loader.exec_module(mod)
        if hasattr(mod, "CONFIG"):
            mod.CONFIG.update(wl.config("small"))
        progs.append((exported(wl.baseline("small"), args, "base"), args))
        progs.append((exported(mod.workload, args, "cand"), args))
        pl.pallas_call = generic
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 1
    for p, a in progs:
        jax.block_until_ready(p(*a))
    session = _profiler.ProfilerSession(opts)
    for _ in range(55):
        for p, a in progs:
            jax.block_until_ready(p(*a))
    return session.stop()


# --------------------------------------------------------------------------- measuring


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(name: str, data: bytes | None, tmp: str) -> None:
    path = os.path.join(tmp, f"{name}.xplane.pb")
    if data is None:  # over the file cap: a sparse file, never read
        with open(path, "wb") as f:
            f.truncate(xplane.MAX_FILE_BYTES + 1)
        size = xplane.MAX_FILE_BYTES + 1
    else:
        with open(path, "wb") as f:
            f.write(data)
        size = len(data)
    del data
    before = _rss_mb()
    t = time.monotonic()
    try:
        summary = xplane.parse_in_subprocess(path, ["cand", "base"], "cpu", expected=55)
        wall = time.monotonic() - t
        p = summary.parser
        runs = {
            k: (len(v.durations_s) if isinstance(v, xplane.Executions) else str(v)) for k, v in summary.programs.items()
        }
        print(
            f"{name:<12} {size / 2**20:8.1f} MiB {summary.n_events:>9} events  parsed in {wall:5.2f} s wall, "
            f"{p['cpu_s']:5.2f} s CPU, parser peak RSS {p['peak_rss_bytes'] / 2**20:6.1f} MiB "
            f"(address space {p['peak_vm_bytes'] / 2**20:.0f} MiB), "
            f"parent +{_rss_mb() - before:.1f} MiB; executions {runs}",
            flush=True,
        )
    except xplane.TraceError as exc:
        wall = time.monotonic() - t
        p = getattr(exc, "parser", None) or {}
        cost = f", {p['cpu_s']:5.2f} s CPU, parser peak RSS {p['peak_rss_bytes'] / 2**20:6.1f} MiB" if p else ""
        print(
            f"{name:<12} {size / 2**20:8.1f} MiB  rejected in {wall:5.2f} s wall{cost}, "
            f"parent +{_rss_mb() - before:.1f} MiB: {exc}",
            flush=True,
        )
    finally:
        os.unlink(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", action="store_true", help="also the interpreted Pallas kernels' real traces")
    ap.add_argument("--only", default="", help="comma-separated case names")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    print(
        f"caps: file {xplane.MAX_FILE_BYTES >> 20} MiB, {xplane.MAX_EVENTS} events, "
        f"{xplane.MAX_EVENTS_PER_LINE} per line, {xplane.MAX_DECODED_FIELDS} decoded fields; parser limits: "
        f"{xplane.PARSE_MEM_BYTES >> 20} MiB address space, {xplane.PARSE_CPU_S} s CPU, {xplane.PARSE_WALL_S:g} s wall"
    )
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    cases: dict = {"normal": lambda: real_trace("normal"), "worst": worst_case}
    cases.update(over_cases())
    if args.real:
        cases.update({k: (lambda k=k: real_trace(k)) for k in ("1p-example", "6p-expert")})
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in cases.items():
            if only and name not in only:
                continue
            measure(name, build() if build else None, tmp)


if __name__ == "__main__":
    main()
