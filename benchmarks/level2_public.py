"""Level 2's public files, run here: each level-2 twin's public ``baseline.py`` uploaded as a
candidate through the harness (the cpu target, the small profile) against the twin's own Pallas
baseline. The evidence behind a twin's "Run here" sentence (``Upstream.conformance``). A twin that
runs on a TPU only is skipped here; ``benchmarks/tpu_harness.py --public-suite DIR`` runs its file
on the chip with the same appended line (``public_candidate``).

The public file is taken as it is, with one line appended: ``TUNED_PARAMS.update(...)``, its
tuned blocks clamped to the small profile's dimensions exactly as the twin's ``pallas_baseline``
clamps them (each twin's ``small-profile`` deviation says so; the public blocks are larger than
the small shapes). Every public ``workload()`` reads ``TUNED_PARAMS`` when it is called, so no
line of the file changes. Prints, per twin, the file's SHA-256 (which text was run), the outcome,
the speedup with its interval and the largest error. Needs the public files (never committed
here): ``--suite DIR`` holds ``JAXBench/benchmark/level2/``, a checkout of the public repository
or copies of its stored files. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/level2_public.py --suite /path/to/accelerator-agents [--only l2-1p,l2-8p]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jaxbench import harness, workloads  # noqa: E402

# Each twin's tuned blocks at the small profile: the public value clamped to the small shape, as
# its pallas_baseline does (the module's small-profile deviation names the same numbers). None: the
# file has no tuned blocks to clamp (64p picks its blocks from the chip's TPU info as it traces).
SMALL_TUNED: dict[str, dict[str, object] | None] = {
    "l2-1p": {"block_q": 512, "block_k_major": 512, "block_k": 512},
    "l2-2p": {"block_q": 256, "block_kv": 256, "block_kv_compute": 256},
    "l2-4p": {"block_q": 256, "block_kv": 256, "block_kv_compute": 256},
    "l2-6p": {"pages_per_compute_block": 8},
    "l2-8p": {"block_shape": [512, 1792], "block_k": 512},
    "l2-11p": {"tiling": [256, 512, 256]},
    "l2-7p": {"num_kv_pages_per_block": 16, "num_queries_per_block": 64},
    "64p": None,
}


def candidate_source(public_text: str, tuned: dict[str, object] | None) -> str:
    """The public file with its tuned blocks set for the small profile by one appended line (the
    file unchanged where it has none to clamp)."""
    if tuned is None:
        return public_text
    if not re.search(r"^TUNED_PARAMS = ", public_text, re.MULTILINE):
        raise ValueError("the public file no longer has TUNED_PARAMS")
    return public_text.rstrip("\n") + f"\n\n# the small profile's clamped blocks\nTUNED_PARAMS.update({tuned!r})\n"


def public_candidate(wl, suite: pathlib.Path) -> tuple[str, str]:
    """(candidate source, first 16 hex digits of the public file's SHA-256) for a level-2 twin,
    from a folder holding ``JAXBench/benchmark/level2/``."""
    path = suite / wl.upstream.file
    if not path.is_file():
        raise FileNotFoundError(f"{wl.id}: no public file at {path}")
    text = path.read_text(encoding="utf-8")
    return candidate_source(text, SMALL_TUNED[wl.id]), hashlib.sha256(text.encode()).hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, help="holds JAXBench/benchmark/level2/")
    ap.add_argument("--only", default="", help="comma-separated twin IDs (default: every level-2 workload)")
    args = ap.parse_args()
    suite = pathlib.Path(args.suite).resolve()
    only = {w.strip() for w in args.only.split(",") if w.strip()}
    rows = []
    for wl in workloads.all_workloads():
        if wl.level != 2 or (only and wl.id not in only):
            continue
        if "cpu" not in wl.platforms:
            rows.append((wl.id, "-", f"skipped: {wl.platform_note or 'not on the cpu target'}"[:160]))
            continue
        if SMALL_TUNED[wl.id] is None:
            rows.append((wl.id, "-", "skipped: the file reads the chip's TPU info as it traces (run it on a TPU)"))
            continue
        try:
            source, digest = public_candidate(wl, suite)
        except FileNotFoundError as exc:
            rows.append((wl.id, "-", f"absent: {exc}"))
            continue
        t0 = time.monotonic()
        rec = harness.evaluate(wl.id, source, profile="small", hardware="cpu")
        lo, hi = rec.get("speedup_ci") or (None, None)
        speed = f"{rec['speedup']:.3f}x [{lo:.2f}, {hi:.2f}]" if rec.get("speedup") else "-"
        said = (
            f"{rec['outcome']} {rec.get('error_category') or ''} {speed} max_abs_err {rec.get('max_abs_err')} "
            f"in {time.monotonic() - t0:.0f} s | {(rec.get('message') or '')[:140]}"
        )
        rows.append((wl.id, digest, said))
        print(f"{wl.id}: {said}", flush=True)
    print(f"\n{'twin':<8} {'sha256 of the public file':<26} result")
    for wid, digest, said in rows:
        print(f"{wid:<8} {digest:<26} {said}")


if __name__ == "__main__":
    main()
