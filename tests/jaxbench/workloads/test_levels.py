"""Levels and multi-configuration workloads: the declaration rules, cases, the registry's extra
modules, and the pure fold of configurations into one verdict (no JAX compile, no children)."""

import dataclasses
import math

import pytest

from jaxbench import workloads
from jaxbench.record import REVIEW_SPEEDUP
from jaxbench.verdict import configurations as cfgs
from jaxbench.verdict import review as review_rules
from jaxbench.workloads import versions

LEVEL_TWO = ["l2-1p", "l2-2p", "l2-4p", "l2-6p", "l2-7p", "l2-8p", "l2-11p", "64p"]
MULTI_CONFIGURATION = {"64p"}  # the registered workloads with several configurations


def test_level_one_is_the_public_suites_50_then_level_two_s_twins():
    assert [w.id for w in workloads.of_level(1)] == workloads.ids()[:50]
    assert len(workloads.of_level(1)) == 50 and [w.id for w in workloads.of_level(2)] == LEVEL_TWO
    assert all(
        not w.configurations and w.cases("small") == ("small",)
        for w in workloads.all_workloads()
        if w.id not in MULTI_CONFIGURATION
    )
    # level 1's workloads are timed against XLA on every platform
    assert all(w.pallas_baseline is None and w.platforms == ("cpu", "tpu", "gpu") for w in workloads.of_level(1))


def test_an_extra_module_registers_a_level_two_workload_with_ten_configurations(level2):
    assert workloads.get("51d") is level2 and workloads.get("51d-gated-rmsnorm") is level2
    # numbered within the level: 51d before 64p
    assert [w.id for w in workloads.of_level(2)] == [*LEVEL_TWO[:-1], "51d", "64p"]
    assert len(workloads.all_workloads()) == 59
    assert level2.configuration_names("small") == tuple(f"c{i:02d}" for i in range(1, 11))
    assert level2.cases("full")[0] == "full/c01"
    assert level2.config("small/c05") == {"epsilon": 1e-6, "tokens": 8, "hidden": 256}
    assert level2.summary()["level"] == 2 and len(level2.summary()["configurations"]["full"]) == 10


def test_a_multi_configuration_profile_has_no_single_config(level2):
    with pytest.raises(KeyError, match="has 10 configurations: name one, e.g. small/c01"):
        level2.config("small")
    with pytest.raises(KeyError, match="no configuration 'c11'"):
        level2.config("small/c11")
    with pytest.raises(KeyError, match="no profile"):
        level2.cases("medium")


def test_the_content_hash_covers_configurations_and_leaves_level_one_hashes_alone(level2):
    moved = dataclasses.replace(
        level2,
        configurations={p: {**v, "c10": {"tokens": 256, "hidden": 128}} for p, v in level2.configurations.items()},
    )
    assert moved.content_hash != level2.content_hash
    assert "configurations" in versions.content_parts(level2)
    # a one-configuration workload's hash is exactly what versions.py recorded for it
    assert "configurations" not in versions.content_parts(workloads.get("12p"))
    assert workloads.get("12p").content_hash == versions.RECORDED["12p"][1]


def test_a_twin_is_named_with_its_level_and_numbered_within_it():
    twin = workloads.get("l2-8p")
    assert (twin.number, twin.order, twin.bare_id) == (8, (2, 8), "8p")
    assert workloads.get("8p").order == (1, 8)
    for name in ("l2-8p", "L2-8P", "l2-8p-gemm", "level2/8p_GEMM", "level2/8p_GEMM.py", "level2-8p"):
        assert workloads.get(name) is twin, name
    assert workloads.get("8p_GEMM").id == "8p"
    with pytest.raises(KeyError):
        workloads.get("l2-12p")  # level 2 has no twin of 12p
    # module and version bookkeeping know the prefix
    assert versions._module_file(twin) == "l2_w08p_gemm.py"
    assert versions.check(twin) is None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"id": "l3-8p"}, "only a level-3 twin"),
        ({"id": "l2-51p"}, "only a level-2 twin"),
        ({"platforms": ("cpu", "tpu")}, "needs platform_note"),
        ({"platforms": ("cpu", "fpga"), "platform_note": "x"}, "subset"),
    ],
)
def test_twin_and_platform_declarations_are_checked(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(workloads.get("8p"), **{"level": 2, "id": "l2-8p", "slug": "l2-8p-gemm", **change})


@pytest.mark.parametrize(
    "change, message",
    [
        ({"id": "50d"}, "level 1 numbers 1-50"),
        ({"id": "52k", "level": 1}, "level 1 numbers 1-50"),
        ({"id": "52p"}, "ends with 'd'"),
        ({"level": 3}, "unknown level"),
        ({"configurations": {"small": {"a": {}}}}, "exactly"),
        ({"configurations": {"small": {"a": {}}, "full": {"b": {}}}}, "same configuration names"),
        ({"configurations": {"small": {"A b": {}}, "full": {"A b": {}}}}, "bad configuration names"),
    ],
)
def test_declarations_are_checked(level2, change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(level2, **change)


# ------------------------------------------------------------------------------------------------
# combine: the fold of the configurations' records


def _rec(outcome="correct_faster", speedup=2.0, lo=1.8, hi=2.2, **kw):
    correct = outcome.startswith("correct")
    rec = {
        "outcome": outcome,
        "error_category": None if correct else "not_allclose",
        "message": f"{outcome} here",
        "speedup": speedup if correct else None,
        "speedup_ci": [lo, hi] if correct else None,
        "timing": {"median_s": 1e-3 / (speedup or 1), "n": 50} if correct else None,
        "baseline_timing": {"median_s": 1e-3, "n": 50} if correct else None,
        "held_for_review": False,
        "notes": [],
        "phases": {"total_s": 3.0},
        "profile": "small/cX",
    }
    rec.update(kw)
    return rec


def test_all_correct_is_the_geometric_mean_with_its_interval():
    out = cfgs.combine(
        "small",
        [("a", "small/a", _rec(speedup=2.0, lo=1.5, hi=2.5)), ("b", "small/b", _rec(speedup=0.5, lo=0.4, hi=0.6))],
    )
    assert out["speedup"] == pytest.approx(1.0)
    assert out["speedup_ci"] == pytest.approx([math.sqrt(1.5 * 0.4), math.sqrt(2.5 * 0.6)])
    assert out["outcome"] == "correct_tie" and out["profile"] == "small"
    assert [c["name"] for c in out["configurations"]] == ["a", "b"]
    assert [c["outcome"] for c in out["configurations"]] == ["correct_faster", "correct_faster"]
    assert out["timing"]["median_s"] == pytest.approx(1e-3) and out["timing"]["method"] == "geomean_over_configurations"
    assert "correct on all 2 configurations" in out["message"] and "a 2.00x, b 0.50x" in out["message"]


def test_faster_needs_the_whole_geomean_interval_above_one():
    out = cfgs.combine("small", [(n, f"small/{n}", _rec(speedup=1.3, lo=1.1, hi=1.5)) for n in "abc"])
    assert out["outcome"] == "correct_faster" and out["speedup_ci"][0] == pytest.approx(1.1)


def test_the_first_failure_decides_and_later_configurations_are_not_run():
    out = cfgs.combine(
        "full",
        [
            ("a", "full/a", _rec()),
            ("b", "full/b", _rec("incorrect", message="output 0: 5 of 8 elements wrong")),
            ("c", "full/c", None),
        ],
    )
    assert out["outcome"] == "incorrect" and out["error_category"] == "not_allclose"
    assert out["message"].startswith("configuration b (2 of 3 run): output 0: 5 of 8")
    assert out["speedup"] is None and out["speedup_ci"] is None and out["timing"] is None
    assert [c["outcome"] for c in out["configurations"]] == ["correct_faster", "incorrect", cfgs.NOT_RUN]


def test_held_anywhere_is_held_and_a_huge_geomean_is_held():
    out = cfgs.combine("small", [("a", "small/a", _rec()), ("b", "small/b", _rec(held_for_review=True))])
    assert out["held_for_review"] is True
    big = REVIEW_SPEEDUP * 2
    out = cfgs.combine("small", [("a", "small/a", _rec(speedup=big, lo=big, hi=big))])
    assert out["held_for_review"] is True


def test_a_held_record_withholds_every_configurations_speed():
    out = cfgs.combine("small", [("a", "small/a", _rec(held_for_review=True)), ("b", "small/b", _rec())])
    public = review_rules.public_record(out, review_rules.HELD)
    for c in public["configurations"]:
        assert c["speedup"] is None and c["speedup_ci"] is None and c["median_s"] is None
        assert c["outcome"] == review_rules.HELD_OUTCOME
    rows = cfgs.public_rows(public["configurations"])
    assert rows and all(r["speedup"] is None for r in rows)
    assert cfgs.public_rows(None) is None


def test_nothing_run_is_an_error():
    with pytest.raises(ValueError):
        cfgs.combine("small", [("a", "small/a", None)])


def test_every_configuration_of_the_test_workload_defeats_the_null_kernels(level2):
    """The registry audit's no-op rule, for each configuration of a multi-configuration workload:
    zeros, a constant (the exact answer's mean), each input passed through where its shape fits,
    and the reference for other inputs all fail the harness's comparison."""
    import jax
    import numpy as np

    from jaxbench.verdict.numerics import exact_rule_report

    for case in level2.cases("small"):
        create = jax.jit(lambda k, case=case: level2.create_inputs(case, k))
        xs = create(jax.random.key(0))
        xla = np.asarray(jax.jit(level2.baseline(case))(*xs), np.float32)
        exact = np.asarray(jax.jit(level2.exact(case))(*xs), np.float32)
        other = np.asarray(jax.jit(level2.baseline(case))(*create(jax.random.key(1))), np.float32)
        nulls = {"zeros": np.zeros_like(exact), "mean": np.full_like(exact, exact.mean()), "other inputs": other}
        nulls.update(
            {name: np.asarray(x, np.float32) for name, x in zip(level2.input_names, xs) if x.shape == exact.shape}
        )
        assert {"x", "gate"} <= set(nulls), case
        assert exact_rule_report(exact, xla, xla, level2.atol, level2.rtol)["passed"], case
        for name, cand in nulls.items():
            assert not exact_rule_report(exact, xla, cand, level2.atol, level2.rtol)["passed"], (case, name)


def test_a_later_level_s_public_tasks_are_each_here_or_listed_as_absent_with_why():
    from jaxbench.workloads import absent

    here = {w.public_name for w in workloads.of_level(2) if w.upstream is not None}
    missing = {a.public_name for a in absent.of_level(2)}
    assert not here & missing and len(here) == 8 and len(missing) == 14  # the public level 2's 22 tasks
    assert all(a.reason.strip() for a in absent.of_level(2)) and absent.of_level(1) == ()
    assert "SparseCore" in next(a.reason for a in absent.of_level(2) if a.public_name.startswith("57p_"))
