"""What a timer child leaves for the trusted side, read back (trusted side): its outputs (``.npy``
with size caps, never unpickled), its list of timed calls whose output differed, and its one
profiler trace, parsed in a resource-limited process. Also the block order the trusted side
draws for the interleaved timing."""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np

from .. import arrays
from ..profiling import xplane
from ..profiling.parser_process import TraceParser
from ..sandbox.safedir import SafeDir
from .settings import BLOCK, ITERS, TRACE_CAP, InfrastructureError, MeasurementUntrusted

OutSpecs = list[tuple[str, tuple[int, ...]]]


def load_outputs(work: SafeDir, tag: str, out_specs: OutSpecs) -> list[np.ndarray]:
    """The outputs the timer wrote under ``out/<tag>/``, each exactly its expected dtype and
    shape (``arrays.OutputError`` otherwise)."""
    out = []
    for k, (dt, shape) in enumerate(out_specs):
        try:
            data = work.read(f"out/{tag}/{k}.npy", arrays.NPY_HEADER_CAP + int(np.prod(shape, dtype=np.int64)) * 8 + 1)
        except OSError as exc:
            raise arrays.OutputError("bad_output", f"output {k} of {tag}: {exc}") from None
        out.append(arrays.load_npy_bytes(data, dt, shape))
    return out


def block_order(seed: int, n_blocks: int) -> list[int]:
    """Which program opens each block of the interleaved timing (0: the candidate, 1: the
    baseline), drawn from ``seed`` (recorded: the order can be rebuilt). Blocks come in pairs
    whose order is drawn (AB or BA), so each program opens exactly half of them: random, yet as
    balanced as the ABBA order it replaces (a drift or a cost of going first cancels)."""
    rng = random.Random(seed)
    order: list[int] = []
    while len(order) < n_blocks:
        first = rng.getrandbits(1)
        order += [first, 1 - first]
    return order[:n_blocks]


def differing_calls(claimed: object, saved: dict[str, Any], first: int = 0, n: int = ITERS) -> list[int]:
    """The timed calls (``first`` to ``first + n``, one round's) the timer wrote because their
    output differed from the checked one."""
    calls = claimed if isinstance(claimed, list) else []
    out = sorted({int(i) for i in calls if isinstance(i, int) and first <= i < first + n})
    if set(map(str, out)) != set(saved):
        raise InfrastructureError("the timer's list of differing timed outputs does not match the files it wrote")
    return out


def read_summary(
    work: SafeDir, names: list[str], platform: str, round_no: int = 0, parser: TraceParser | None = None
) -> xplane.TraceSummary:
    """The summary of the child's one trace file of timing round ``round_no`` for the programs
    ``names``, parsed in a resource-limited process that gets the file's descriptor, never the
    bytes: ``parser``'s (the timing phase keeps one for its rounds), else one of its own."""
    base = f"trace/r{int(round_no)}/plugins/profile"
    runs = work.listdir(base)
    if len(runs) != 1:
        raise xplane.TraceError(f"expected one profile run, found {len(runs)}")
    files = work.listdir(f"{base}/{runs[0]}")
    pbs = [f for f in files if f.endswith(".xplane.pb")]
    if len(pbs) != 1 or len(files) > 16:
        raise xplane.TraceError(f"expected one .xplane.pb, found {len(pbs)}")
    fd = work.open(f"{base}/{runs[0]}/{pbs[0]}", TRACE_CAP)
    try:
        if parser is not None:
            return parser.parse(fd, names, platform, expected=ITERS)
        return xplane.parse_in_subprocess(fd, names, platform, expected=ITERS)
    except xplane.ParserStarved as exc:  # the load's doing: time the case again
        raise MeasurementUntrusted(str(exc)) from None
    except xplane.ParserUnavailable as exc:  # the host's failure, not the candidate's
        raise InfrastructureError(str(exc)) from None
    finally:
        os.close(fd)


def read_trace(
    work: SafeDir, name: str, platform: str, round_no: int = 0, parser: TraceParser | None = None
) -> tuple[xplane.Executions, xplane.TraceSummary]:
    """(the ITERS executions of program ``name``, the summary) of timing round ``round_no``."""
    space = read_summary(work, [name], platform, round_no, parser)
    return _counted(space.executions(name)), space


def _counted(ex: xplane.Executions) -> xplane.Executions:
    if len(ex.durations_s) != ITERS:
        raise xplane.TraceError(
            f"the trace holds {len(ex.durations_s)} executions of the program, expected exactly {ITERS}"
        )
    return ex


SHARED = "+call_order"  # the method's suffix where one executable served both programs


def call_sequence(order: list[int], block: int = BLOCK, iters: int = ITERS) -> list[int]:
    """The program of each timed call of a round, in the order the timer makes them (0: the
    candidate, 1: the baseline): the timer's loop (``child_main``'s ``timing``) rebuilt from the
    block order the trusted side drew."""
    seq: list[int] = []
    for b, first in enumerate(range(0, iters, block)):
        n = min(first + block, iters) - first
        for k in (1, 0) if order[b] else (0, 1):
            seq += [k] * n
    return seq


def pair_executions(
    space: xplane.TraceSummary, name: str, base_name: str, order: list[int]
) -> tuple[xplane.Executions, xplane.Executions]:
    """(the candidate's, the baseline's) executions in one timing round's trace. Where the
    candidate's program is the baseline's program, a runtime may compile the second into the
    first's executable (the TPU runtime caches executables by their content, not their name):
    then every one of the 2 x ITERS executions carries one of the two names and none the other.
    Device executions run one at a time (the timer waits for each call), so their start order is
    the call order, which the trusted side drew: each execution is attributed by it."""
    c, b = space.programs.get(name), space.programs.get(base_name)
    if isinstance(c, xplane.Executions) and isinstance(b, xplane.Executions):
        counts = sorted((len(c.durations_s), len(b.durations_s)))
        if counts == [0, 2 * ITERS]:
            shared = c if c.durations_s else b
            ends = [s + d * 1e12 for s, d in zip(shared.starts_ps, shared.durations_s)]
            if any(nxt < end for nxt, end in zip(shared.starts_ps[1:], ends)):
                raise xplane.TraceError("the executions of the program's shared executable overlap")
            split = [xplane.Executions([], [], shared.method + SHARED, shared.plane) for _ in range(2)]
            for k, d, s in zip(call_sequence(order), shared.durations_s, shared.starts_ps):
                split[k].durations_s.append(d)
                split[k].starts_ps.append(s)
            return split[0], split[1]
    return _counted(space.executions(name)), _counted(space.executions(base_name))
