"""The summary both accelerator checks print (``gpu_harness.py``, ``tpu_harness.py``): per kind
of candidate, its evaluations' outcomes and median wall; for identical code, the speedups' range
and how many were labelled faster or slower (a measurement error)."""

from __future__ import annotations

import statistics


def print_summary(records: list[dict], kinds: tuple[str, ...], identical: str) -> None:
    for kind in kinds:
        rows = [r for r in records if r.get("kind") == kind and "outcome" in r]
        if not rows:
            continue
        outs = [r["outcome"] for r in rows]
        print(
            f"{kind}: {len(rows)} evaluations, outcomes "
            + ", ".join(f"{o} {outs.count(o)}" for o in sorted(set(outs)))
            + f"; median wall {statistics.median(r['wall_s'] for r in rows):.1f} s"
        )
        if kind == identical:
            speedups = [r["speedup"] for r in rows if r.get("speedup")]
            if speedups:
                print(
                    f"  identical code: speedups {min(speedups):.3f}-{max(speedups):.3f}, labelled faster/slower: "
                    f"{sum(o in ('correct_faster', 'correct_slower') for o in outs)} of {len(rows)}"
                )
