"""How long ``make test`` takes, quiet and beside a busy loop: the README's test command from a
clean environment (``env -i``, as CI runs it), its wall time and each pytest tier's own line
(passed, failed, seconds), read from the run's output.

The issue's target: under 20 minutes on this 2-core machine, also with a busy numpy loop on the
other core. ``--busy`` starts the loop (``benchmarks/busy.py``) for the whole run; ``--target``
runs one Makefile target instead (``test-embedded-fast``, ``test-alone``, ...). The log is kept
(``--log``). Prints figures; asserts nothing.

    .venv/bin/python benchmarks/suite_time.py [--busy] [--target test] [--log /tmp/suite.log]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.busy import busy_loop, last_core  # noqa: E402

# the line each pytest run prints last, and the banner each Makefile tier prints first
SUMMARY = re.compile(r"^=+ (?P<counts>.*?) in (?P<secs>[\d.]+)s(?: \([\d:]+\))? =+$")
BANNER = re.compile(r"^== (?P<tier>.+?) ==$")
# a clean environment, as .ci/run gets it: nothing of this shell's virtual environment leaks in
CLEAN_PATH = "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def tiers(log: str) -> list[tuple[str, str, float]]:
    """(tier banner, pytest's counts, its seconds) for each pytest run of the log, in the order
    they finished (``--output-sync`` prints a tier's lines together when it ends)."""
    out: list[tuple[str, str, float]] = []
    tier = "?"
    for line in log.splitlines():
        if m := BANNER.match(line.strip()):
            tier = m["tier"]
        elif m := SUMMARY.match(line.strip()):
            out.append((tier, m["counts"], float(m["secs"])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", action="store_true", help="a busy numpy loop on the last core throughout")
    ap.add_argument("--target", default="test", help="the Makefile target (default: test)")
    ap.add_argument("--log", default=None, help="where the run's output goes (default: a temporary file)")
    args = ap.parse_args()
    log_path = args.log or f"/tmp/suite-time-{os.getpid()}.log"
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": CLEAN_PATH}
    with contextlib.ExitStack() as stack:
        if args.busy:
            print(stack.enter_context(busy_loop(last_core())), flush=True)
        print(f"make {args.target} in {ROOT} (a clean environment), output in {log_path}", flush=True)
        t0 = time.monotonic()
        with open(log_path, "w") as log:
            rc = subprocess.run(
                ["make", args.target], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            ).returncode
        wall = time.monotonic() - t0
    with open(log_path) as f:
        text = f.read()
    print(f"\n{'tier':<70} {'seconds':>8}  counts")
    for tier, counts, secs in tiers(text):
        print(f"{tier[:70]:<70} {secs:>8.0f}  {counts}")
    load = "beside a busy loop" if args.busy else "quiet"
    print(f"\nmake {args.target}: exit {rc} in {wall:.0f} s ({wall / 60:.1f} min), {load}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
