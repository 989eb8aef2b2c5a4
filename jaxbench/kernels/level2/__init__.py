"""Level 2's baselines as candidates: each file calls the JAX kernel its workload is timed
against, with the same blocks (``Workload.pallas_baseline``), through the candidate interface.
Identical programs on both sides of the ratio: a tie is the only right verdict, so they check a
level-2 board's measurement the way the XLA reference checks level 1's
(benchmarks/honest_kernels.py, benchmarks/tpu_harness.py)."""

from __future__ import annotations

import pathlib
import re

HERE = pathlib.Path(__file__).parent
# workload ID -> file: "l2-8p-gemm.py" (a twin of a level-1 task), "64p-linear-....py" (a new task)
_ID = re.compile(r"^(?:l\d-)?\d+[a-z](?=-)")
FILES = {m.group(0): p for p in sorted(HERE.glob("*.py")) if (m := _ID.match(p.stem))}


def source(wid: str) -> str:
    return FILES[wid].read_text(encoding="utf-8")
