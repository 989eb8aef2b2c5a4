"""Level 2's baselines as candidates: each file calls the JAX kernel its workload is timed
against, with the same blocks (``Workload.pallas_baseline``), through the candidate interface.
Identical programs on both sides of the ratio: a tie is the only right verdict, so they check a
level-2 board's measurement the way the XLA reference checks level 1's
(benchmarks/honest_kernels.py, benchmarks/tpu_harness.py)."""

from __future__ import annotations

import pathlib

HERE = pathlib.Path(__file__).parent
# workload ID -> file
FILES = {p.stem.split("-", 2)[0] + "-" + p.stem.split("-", 2)[1]: p for p in sorted(HERE.glob("l2-*.py"))}


def source(wid: str) -> str:
    return FILES[wid].read_text(encoding="utf-8")
