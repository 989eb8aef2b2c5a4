"""One executable for two identical programs (seen on a TPU v5e: the runtime caches executables
by content, so the XLA reference submitted as a candidate ran as the baseline's executable and
all 100 executions of a round carried one name). The trusted side attributes each execution by
the call order it drew; these tests prove that order is the timer's own, on real traces."""

import pytest

from catalog.starter import starter_source
from jaxbench import workloads
from jaxbench.harness import run as run_mod
from jaxbench.harness import timer_files
from jaxbench.harness.settings import BLOCK, ITERS
from jaxbench.harness.timer_files import block_order, call_sequence, pair_executions
from jaxbench.profiling import xplane


def _ex(starts, dur=1e-6, method="device_xla_module"):
    return xplane.Executions([dur] * len(starts), list(starts), method, "/device:TPU:0")


def _space(programs):
    return xplane.TraceSummary(programs, 0, None, {})


def test_the_call_sequence_follows_the_drawn_blocks():
    order = block_order(7, -(-ITERS // BLOCK))
    seq = call_sequence(order)
    assert len(seq) == 2 * ITERS and seq.count(0) == seq.count(1) == ITERS
    for b, first in enumerate(seq[i] for i in range(0, 2 * ITERS, 2 * BLOCK)):
        assert first == order[b]
        chunk = seq[2 * BLOCK * b : 2 * BLOCK * (b + 1)]
        assert chunk == [order[b]] * BLOCK + [1 - order[b]] * BLOCK


@pytest.mark.parametrize("holder", ["cand", "base"])
def test_a_shared_executable_is_split_by_the_call_order(holder):
    order = block_order(11, -(-ITERS // BLOCK))
    starts = [i * 10**7 for i in range(2 * ITERS)]  # 10 us apart, each 1 us long
    shared, empty = _ex(starts), _ex([])
    programs = {"cand": shared, "base": empty} if holder == "cand" else {"cand": empty, "base": shared}
    c, b = pair_executions(_space(programs), "cand", "base", order)
    seq = call_sequence(order)
    assert c.starts_ps == [s for s, k in zip(starts, seq) if k == 0]
    assert b.starts_ps == [s for s, k in zip(starts, seq) if k == 1]
    assert c.method == b.method == "device_xla_module+call_order"


def test_anything_else_still_fails_as_before():
    order = block_order(3, -(-ITERS // BLOCK))
    ok = _ex([i * 10**7 for i in range(ITERS)])
    with pytest.raises(xplane.TraceError, match="holds 99 executions"):
        pair_executions(_space({"c": _ex(range(99)), "b": ok}), "c", "b", order)
    with pytest.raises(xplane.TraceError, match="holds 0 executions"):
        pair_executions(_space({"c": _ex([i * 10**7 for i in range(ITERS)]), "b": _ex([])}), "c", "b", order)
    both = {"c": _ex([i * 10**7 for i in range(2 * ITERS)]), "b": ok}
    with pytest.raises(xplane.TraceError, match="holds 100 executions"):
        pair_executions(_space(both), "c", "b", order)
    overlapping = _ex([i * 10**5 for i in range(2 * ITERS)])  # 0.1 us apart, 1 us long
    with pytest.raises(xplane.TraceError, match="overlap"):
        pair_executions(_space({"c": overlapping, "b": _ex([])}), "c", "b", order)


def test_the_split_of_a_real_trace_gives_back_each_programs_own_executions(evaluate, monkeypatch):
    """A real round on the CPU, its two programs' executions merged under one name as the TPU
    showed them: the split must give each program exactly its own executions back."""
    seen = []
    real = timer_files.read_summary

    def merged(work, names, platform, round_no=0, parser=None):
        space = real(work, names, platform, round_no, parser)
        c, b = (space.executions(n) for n in names)
        both = sorted(zip(c.starts_ps + b.starts_ps, c.durations_s + b.durations_s))
        seen.append((list(c.starts_ps), list(b.starts_ps)))
        shared = xplane.Executions([d for _, d in both], [s for s, _ in both], c.method, c.plane)
        return xplane.TraceSummary({names[0]: shared, names[1]: _ex([])}, space.n_events, space.window_ns, {})

    split = []
    real_pair = run_mod.pair_executions

    def recording(space, name, base_name, order):
        got = real_pair(space, name, base_name, order)
        split.append((list(got[0].starts_ps), list(got[1].starts_ps)))
        return got

    monkeypatch.setattr(run_mod, "read_summary", merged)
    monkeypatch.setattr(run_mod, "pair_executions", recording)
    rec = evaluate(starter_source(workloads.get("12p"), "small"), require_pallas=False)
    assert rec["outcome"].startswith("correct_"), rec["message"]
    assert seen and split == seen
    assert rec["timing"]["method"] == "cpu_thunk_span+call_order"
