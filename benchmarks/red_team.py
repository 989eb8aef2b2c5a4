"""The whole red-team corpus through the real harness, as the worker runs it (a warm pool, 12p at
the small profile on CPU), quiet or with a busy loop on the other core: each attack's verdict
against the ones its ``# expect:`` line allows. Run after changing a verdict rule; prints the
figures, asserts nothing (the pipeline test asserts them: tests/jaxbench/adversarial).

``.venv/bin/python benchmarks/red_team.py [--busy] [--only name,...]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.busy import busy_loop, last_core  # noqa: E402
from jaxbench import harness  # noqa: E402
from tests.jaxbench.adversarial.corpus import expectations, files, source  # noqa: E402

# the worker's limits in the corpus pipeline test (a candidate file may ask for shorter ones)
TIMEOUTS = {"compile": 40, "check": 60, "timing": 120}


def run_as_the_worker(pool, path: pathlib.Path) -> tuple[tuple[str, str | None], dict | None]:
    """(outcome, category) as the worker decides it: a child killed by a signal the harness did
    not send is tried again on a fresh child, and the same death twice is the candidate's
    ``runtime_error`` (crash; evaluator.runner.died_again_record); any other harness failure is
    said, never a verdict."""
    deaths = []
    while True:
        try:
            rec = pool.evaluate("12p", source(path), profile="small", hardware="cpu", timeouts=TIMEOUTS)
            return (rec["outcome"], rec["error_category"]), rec
        except harness.InfrastructureError as exc:
            death = getattr(exc, "death", None)
            if death is None:
                return ("(infrastructure)", str(exc)[:80]), None
            if death in deaths:
                return ("runtime_error", "crash"), None
            deaths.append(death)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--busy", action="store_true", help="a busy loop on the last core throughout")
    ap.add_argument("--only", default="", help="comma-separated file names")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    with contextlib.ExitStack() as stack:
        said = stack.enter_context(busy_loop(last_core())) if args.busy else "no extra load"
        print(f"{os.cpu_count()} CPUs; {said}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        t0, ok, n, retried = time.time(), 0, 0, 0
        with harness.WarmPool("cpu") as pool:
            for path in files():
                if only and path.name not in only:
                    continue
                want = expectations(path)
                t = time.time()
                got, rec = run_as_the_worker(pool, path)
                retried += bool(rec and rec.get("load_retries"))
                good = any(got[0] == o and (c is None or got[1] == c) for o, c in want)
                ok, n = ok + good, n + 1
                shown = " | ".join(f"{o} {c or ''}".strip() for o, c in want)
                print(
                    f"{'ok ' if good else 'BAD'} {path.parent.name[:4]}/{path.name:<44} {got[0]:<16} "
                    f"{got[1] or '':<24} {time.time() - t:6.1f} s  expect {shown}",
                    flush=True,
                )
        print(
            f"{ok}/{n} as expected; {retried} timed again for load; {time.time() - t0:.0f} s; "
            f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )


if __name__ == "__main__":
    main()
