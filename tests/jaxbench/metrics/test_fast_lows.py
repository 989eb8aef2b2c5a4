"""fast_p@N from the packed lows (jaxbench.metrics.fast_lows) and the pass@k curve: the same
values as metrics.fast_p / pass_at_k over the whole aggregates (issue 34, item 8)."""

from __future__ import annotations

import importlib
import random

import pytest

from jaxbench import metrics as m
from jaxbench.metrics import INDEPENDENT, SEQUENTIAL, fast_lows
from jaxbench.metrics.per_workload import pass_at_k, pass_at_k_curve


def test_pass_at_k_curve_is_pass_at_k_at_every_k():
    for n in range(0, 40):
        for c in range(0, n + 1):
            for top in (0, 1, n, n + 3):
                assert pass_at_k_curve(n, c, top) == [pass_at_k(n, c, k) for k in range(1, top + 1)], (n, c, top)
    assert pass_at_k_curve(144, 37, 144) == [pass_at_k(144, 37, k) for k in range(1, 145)]
    with pytest.raises(ValueError):
        pass_at_k_curve(3, 4, 2)


def _random_aggregates(rng: random.Random, n_workloads: int) -> dict[int, m.WorkloadAggregate]:
    out = {}
    for pk in range(1, n_workloads + 1):
        samples = []
        for _ in range(rng.randint(0, 30)):
            if rng.random() < 0.5:
                samples.append((rng.choice(["compile_error", "incorrect", "timeout"]), None))
                continue
            speedup = rng.uniform(0.3, 4.0)
            low = speedup * rng.uniform(0.7, 1.0)
            outcome = "correct_faster" if low > 1 else ("correct_slower" if speedup * 1.3 < 1 else "correct_tie")
            if outcome == "correct_tie" and low > 1:
                low = 0.99
            if outcome == "correct_slower":
                samples.append((outcome, speedup, speedup))
            else:
                samples.append((outcome, speedup, low))
        if samples or rng.random() < 0.5:
            out[pk] = m.from_sequence(samples)
    return out


@pytest.mark.parametrize("mode", [SEQUENTIAL, INDEPENDENT])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_packed_fast_p_is_metrics_fast_p(mode, seed):
    rng = random.Random(seed)
    aggs = _random_aggregates(rng, 20)
    packed = fast_lows.unpack(fast_lows.pack(aggs, mode))
    assert packed is not None
    for ids in (list(range(1, 21)), list(range(1, 9)), [3, 5, 25]):  # 25: no aggregate at all
        for n in (None, 0, 1, 2, 5, 17, 40):
            for p in (0.5, 1.1, 1.5, 2.0, 3.5):
                want = m.fast_p(m.select(aggs, ids), n, p, mode)
                assert fast_lows.fast_p(packed, set(ids), n, p, mode) == want, (ids, n, p)
        unpacked = fast_lows.aggregates(packed, set(ids), mode)
        for p in (1.1, 2.0):
            assert m.fast_p_curve(m.select(unpacked, ids), p, mode) == m.fast_p_curve(m.select(aggs, ids), p, mode)


@pytest.mark.parametrize("mode", [SEQUENTIAL, INDEPENDENT])
def test_with_workload_replaces_one_entry(mode):
    rng = random.Random(5)
    aggs = _random_aggregates(rng, 6)
    blob = fast_lows.pack({k: v for k, v in aggs.items() if k != 2}, mode)
    new = m.from_sequence([("correct_faster", 2.5, 1.8), ("correct_faster", 3.0, 2.6)])
    assert fast_lows.with_workload(blob, 2, new, mode) == fast_lows.pack({**aggs, 2: new}, mode)
    assert fast_lows.with_workload(b"", 7, new, mode) == fast_lows.pack({7: new}, mode)
    assert fast_lows.unpack(b"") is None


@pytest.mark.parametrize("mode", [SEQUENTIAL, INDEPENDENT])
def test_the_migration_packs_stored_aggregates_alike(mode):
    """leaderboard 0007 fills the column from the stored JSON with its own copy of the layout;
    an aggregate stored before intervals (no lows) packs its points, as from_dict reads it."""
    migration = importlib.import_module("leaderboard.migrations.0007_summary_fast_lows")
    rng = random.Random(9)
    aggs = _random_aggregates(rng, 8)
    stored = {pk: a.to_dict() for pk, a in aggs.items()}
    points = m.from_sequence([("correct_slower", 0.9), ("correct_faster", 1.7), ("correct_faster", 2.2)]).to_dict()
    stored[1] = {k: v for k, v in points.items() if k not in ("correct_lows", "low_progression")}
    read = {pk: m.WorkloadAggregate.from_dict(d) for pk, d in stored.items()}
    assert migration.pack(list(stored.items()), mode == INDEPENDENT) == fast_lows.pack(read, mode)
