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
from ..sandbox.safedir import SafeDir
from .settings import ITERS, TRACE_CAP, InfrastructureError, MeasurementUntrusted

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


def read_trace(
    work: SafeDir,
    name: str,
    platform: str,
    space: xplane.TraceSummary | None = None,
    also: tuple[str, ...] = (),
    round_no: int = 0,
) -> tuple[xplane.Executions, xplane.TraceSummary]:
    """(Executions of program ``name``, the trace's summary) from the child's one trace file of
    timing round ``round_no``, parsed in a resource-limited process together with the programs
    ``also`` (:func:`xplane.parse_in_subprocess`: it gets the file's descriptor, never the
    bytes); with ``space``, the summary of an earlier call, from that summary."""
    if space is None:
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
            space = xplane.parse_in_subprocess(fd, [name, *also], platform, expected=ITERS)
        except xplane.ParserStarved as exc:  # the load's doing: time the case again
            raise MeasurementUntrusted(str(exc)) from None
        except xplane.ParserUnavailable as exc:  # the host's failure, not the candidate's
            raise InfrastructureError(str(exc)) from None
        finally:
            os.close(fd)
    ex = space.executions(name)
    if len(ex.durations_s) != ITERS:
        raise xplane.TraceError(
            f"the trace holds {len(ex.durations_s)} executions of the program, expected exactly {ITERS}"
        )
    return ex, space
