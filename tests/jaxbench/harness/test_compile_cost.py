"""Compile cost bounded (issue 31, item 5): a small upload must not buy minutes of worker time.
Caps on the exported program's size and operations, checked before anything compiles it
(``verdict/artifact.py`` MAX_MODULE_BYTES, MAX_OPS); a compile limit whose overrun is the
candidate's ``compile_error`` (``compile_timeout``), a verdict never retried. The compile bombs
of the red-team corpus go through the real pipeline at the default compile limit, each within
``corpus.WORKER_SECONDS`` (tests/jaxbench/adversarial/test_corpus_pipeline.py). The figures:
``benchmarks/compile_bomb.py``."""

import pytest

from jaxbench import workloads
from jaxbench.harness import outcomes
from jaxbench.harness.settings import DEFAULT_TIMEOUTS
from jaxbench.profiling import hlo_cost
from jaxbench.record import CATEGORIES, Outcome, new_record
from jaxbench.verdict import artifact, rules
from tests.jaxbench.adversarial import corpus
from tests.jaxbench.kernels import _candidates as kc

WORKER_SECONDS = corpus.WORKER_SECONDS  # what one evaluation of a 1 MB upload may cost, at most


def _good(**kw):
    facts = {
        "platforms": ["cpu"],
        "module_bytes": 1000,
        "ops": 100,
        "in_avals": [[[4], "float32"]],
        "out_avals": [[[4], "float32"]],
        "nr_devices": 1,
        "custom_calls": {},
        "uncountable": [],
    }
    facts.update(kw)
    return facts


def _verify(facts):
    return artifact.verify(facts, [[[4], "float32"]], [[[4], "float32"]], "cpu")


# --------------------------------------------------------------------------- the caps


def test_operation_cap_refuses_with_the_figure_and_the_cap():
    assert _verify(_good(ops=artifact.MAX_OPS)) is None
    category, message = _verify(_good(ops=artifact.MAX_OPS + 1))
    assert category == "artifact_too_large" and category in CATEGORIES["rejected"]
    assert f"{artifact.MAX_OPS + 1:,} operations" in message and f"{artifact.MAX_OPS:,}-operation limit" in message


def test_a_module_too_large_for_the_description_to_count_is_too_large():
    """hlo_cost stops counting at its own cap (and past a nesting depth): ops then reads 0, and the
    reason says why; that is a module too large, not a small one."""
    category, message = _verify(_good(ops=0, uncountable=["a program too large or too deep to read"]))
    assert category == "artifact_too_large" and "too large or nested too deep" in message


def test_the_census_wording_is_what_the_verifier_matches(monkeypatch):
    monkeypatch.setattr(hlo_cost, "MAX_OPS", 5)
    text = (
        "module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        + "".join(f"    %{i} = stablehlo.negate %arg0 : tensor<4xf32>\n" for i in range(8))
        + "    return %arg0 : tensor<4xf32>\n  }\n}\n"
    )
    facts = hlo_cost.module_cost(text)
    assert facts["ops"] == 0 and facts["uncountable"]
    assert _verify(_good(ops=facts["ops"], uncountable=facts["uncountable"]))[0] == "artifact_too_large"


def test_byte_cap_still_comes_first():
    category, message = _verify(_good(module_bytes=artifact.MAX_MODULE_BYTES + 1, ops=artifact.MAX_OPS + 1))
    assert category == "artifact_too_large" and "MiB" in message


def test_the_caps_leave_honest_programs_a_wide_margin():
    """The largest honest program (expert 6p, paged attention, its kernels interpreted for the cpu
    target: 3,359 operations) stays 20x under the operation cap; the largest honest module (the
    same kernel for a TPU at the full profile: 478 KB) 16x under the byte cap."""
    import jax

    from jaxbench.kernels import experts

    wl = workloads.get("6p")
    mod = kc.load_candidate(experts.source("6p"), wl, "small", filename="candidate.py")
    specs = wl.input_specs("small")
    with kc.gpu_interpret(), kc.tpu_target():
        exp = jax.export.export(jax.jit(mod.workload), platforms=["cpu"])(*specs)
    facts = hlo_cost.facts_from_bytes(bytes(exp.serialize()))
    assert 0 < facts["ops"] * 20 <= artifact.MAX_OPS
    assert 478_049 * 16 <= artifact.MAX_MODULE_BYTES


# --------------------------------------------------------------------------- the limit


@pytest.mark.parametrize("phase", ["compile", "load", "export"])
def test_a_compile_side_overrun_is_the_candidates_compile_error(phase):
    assert rules.timeout_verdict(phase) == (Outcome.COMPILE_ERROR, "compile_timeout")
    assert "compile_timeout" in CATEGORIES["compile_error"]


@pytest.mark.parametrize("phase", ["check", "timing"])
def test_a_run_overrun_stays_a_timeout(phase):
    assert rules.timeout_verdict(phase) == (Outcome.TIMEOUT, phase)
    assert phase in CATEGORIES["timeout"]


class _StuckChild:
    def __init__(self, at_limit=False):
        self.killed, self._at_limit = False, at_limit

    def dump_stacks(self):
        return '  File "/in/candidate.py", line 12 in workload'

    def at_memory_limit(self):
        return self._at_limit

    def kill(self):
        self.killed = True


@pytest.mark.parametrize("phase", ["compile", "load"])
def test_the_harness_records_a_compile_timeout(phase):
    rec = new_record(workload="12p", phase="compile")
    child = _StuckChild()
    with pytest.raises(outcomes.Stop):
        outcomes.timed_out(rec, child, phase, DEFAULT_TIMEOUTS["compile"])
    assert child.killed
    assert (rec["outcome"], rec["error_category"]) == ("compile_error", "compile_timeout")
    assert f"exceeded {DEFAULT_TIMEOUTS['compile']:g} s" in rec["message"]
    assert rec["error_category"] in CATEGORIES[rec["outcome"]]


def test_at_the_memory_limit_it_is_still_oom():
    rec = new_record(workload="12p", phase="compile")
    with pytest.raises(outcomes.Stop):
        outcomes.timed_out(rec, _StuckChild(at_limit=True), "compile", 15.0)
    assert (rec["outcome"], rec["error_category"]) == ("runtime_error", "oom")


def test_the_default_limits_bound_a_bomb_under_a_minute():
    """The three compile-side waits (export, load, compile) at their limit, plus the children's
    own seconds, under a minute; the pre-check's lowering and the small profile's export again
    (the same trace) beside them too."""
    compile_s, export_s = DEFAULT_TIMEOUTS["compile"], DEFAULT_TIMEOUTS["export"]
    assert 3 * compile_s + 10 <= WORKER_SECONDS
    assert export_s + export_s + 2 * compile_s + 10 <= WORKER_SECONDS
