"""The trust boundary between the two children of an evaluation (TRUST.md 1): the export child
is the only process that runs the candidate's Python and has no device; the timer child never
imports candidate code, and times and checks what the export child wrote."""

import os

import pytest

from jaxbench.harness import run as run_mod
from jaxbench.harness.export import new_export_child
from jaxbench.harness.run import greet, new_timer_child
from jaxbench.harness.timer_files import block_order
from jaxbench.sandbox.options import Limits

from .conftest import source

MARKER = "JXB-CANDIDATE-IMPORTED"
HONEST = source("correct_rmsnorm.py")
# the honest kernel, announcing on stderr every process its module is imported in
ANNOUNCING = f"import os, sys\nsys.stderr.write('{MARKER} pid=%d\\n' % os.getpid())\n" + HONEST


@pytest.fixture
def timer():
    child = new_timer_child("cpu", Limits())
    yield child
    child.close()


@pytest.fixture
def exporter():
    child = new_export_child()
    yield child
    child.close()


def _ask(child, cmd):
    child.send(cmd)
    return child.recv(60)


@pytest.mark.parametrize("cmd", ["export_run"])
def test_the_timer_refuses_what_runs_candidate_code(timer, cmd):
    greet(timer, 120)
    reply = _ask(timer, {"cmd": cmd, "targets": []})
    assert reply["type"] == "error" and "not a command of the timer role" in reply["message"]


@pytest.mark.parametrize("cmd", ["open", "load", "compile", "check", "timing"])
def test_the_export_child_refuses_what_needs_a_device(exporter, cmd):
    hello = greet(exporter, 120)
    assert hello["platform"] == "cpu" and not exporter.exclusive
    reply = _ask(exporter, {"cmd": cmd, "sets": []})
    assert reply["type"] == "error" and "not a command of the export role" in reply["message"]


def test_the_export_child_has_no_device_even_where_cpu_is_exclusive(monkeypatch):
    monkeypatch.setenv("JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE", "1")
    child = new_export_child()
    try:
        assert not child.exclusive and child.device_lock is None
        assert greet(child, 120)["platform"] == "cpu"
    finally:
        child.close()
    assert child.dead()


def test_candidate_code_runs_in_the_export_child_only(evaluate):
    rec = evaluate(ANNOUNCING)
    assert rec["outcome"].startswith("correct_"), rec["message"]
    assert MARKER in rec["export_child_output"]["stderr"]
    assert MARKER not in rec["child_output"]["stderr"] + rec["child_output"]["stdout"]
    assert rec["artifact_bytes"] and rec["artifact"]["module_bytes"]
    assert rec["has_pallas_call"] is True and rec["pallas_share"]["ok"] is True


def test_what_the_candidate_prints_on_stdout_is_captured(evaluate):
    # the child ends with os._exit: a block-buffered stdout was never flushed and print() lost
    rec = evaluate("print('JXB-PRINTED at import')\n" + HONEST)
    assert rec["outcome"].startswith("correct_"), rec["message"]
    assert "JXB-PRINTED at import" in rec["export_child_output"]["stdout"]


def test_every_timed_output_is_checked_and_the_block_order_is_recorded(evaluate):
    rec = evaluate(HONEST)
    assert rec["outcome"].startswith("correct_"), rec["message"]
    n = rec["resolution"]["rounds"]
    assert rec["timed_outputs"] == {"calls": 50 * n, "identical_to_checked": 50 * n, "checked_here": 0}
    order = rec["timing_order"]
    assert order["block"] == 5 and len(order["seeds"]) == n
    assert sum(sum(block_order(int(s, 16), 10)) for s in order["seeds"]) == order["baseline_first"] == 5 * n


def test_the_block_order_is_drawn_and_balanced():
    orders = {tuple(block_order(seed, 10)) for seed in range(200)}
    assert len(orders) == 32  # every pair drawn AB or BA: 2**5 orders
    assert all(sum(o) == 5 and all(o[i] != o[i + 1] for i in range(0, 10, 2)) for o in orders)
    assert block_order(7, 10) == block_order(7, 10)


def test_outputs_that_change_between_calls_are_caught(evaluate):
    rec = evaluate(
        "import jax, jax.numpy as jnp\n"
        + HONEST.replace("def workload(", "def _honest(")
        + "\n\ndef workload(x, scale):\n"
        "    draw = jax.lax.rng_uniform(jnp.float32(0), jnp.float32(1), ())\n"
        "    return jnp.where(draw > 0.5, jnp.zeros_like(x), _honest(x, scale))\n"
    )
    assert (rec["outcome"], rec["error_category"]) in (
        ("incorrect", "not_allclose"),
        ("rejected", "constant_output"),
        ("rejected", "timed_output_mismatch"),
    ), rec["message"]


TPU_PRNG = """
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CONFIG = {}


def _kernel(x_ref, s_ref, o_ref):
    pltpu.prng_seed(0)
    noise = pltpu.prng_random_bits(o_ref.shape) & 0
    o_ref[...] = x_ref[...] + noise.astype(o_ref.dtype)


def workload(x, scale):
    rows = x.size // x.shape[-1]
    out = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct((rows, x.shape[-1]), x.dtype))(
        x.reshape(rows, -1), scale
    )
    return out.reshape(x.shape)
"""


def test_a_kernel_the_cpu_interpreter_cannot_run_is_said_so(evaluate):
    """TPU's hardware PRNG lowers for a TPU, but JAX's generic Pallas interpreter has no rule
    for it: a clear outcome, never a crash or a silent pass."""
    rec = evaluate(TPU_PRNG)
    assert (rec["outcome"], rec["error_category"]) == ("compile_error", "cpu_unsupported"), rec["message"]
    assert rec["message"].startswith("cannot run on the cpu target:") and "prng_seed" in rec["message"]


def test_an_expert_that_asks_for_its_tpu_runs_on_the_cpu_target():
    """Tokamax's grouped matmul asks JAX which TPU it is lowering for while it traces: the export
    child interprets it against the TPU it was written for (an abstract device), so it runs."""
    from jaxbench import harness
    from jaxbench.kernels import experts

    rec = harness.evaluate("11p", experts.source("11p"), profile="small", hardware="cpu", require_pallas=True)
    assert rec["outcome"].startswith("correct_"), rec["message"]
    assert rec["has_pallas_call"] is True and rec["pallas_share"]["ok"] is True


def test_the_timer_compiles_the_baseline_while_the_export_child_runs_and_gets_the_artifact_after(evaluate, monkeypatch):
    seen = {}
    real_export = run_mod.Run.export

    def export(self, *args, **kw):
        # the job went to the timer first (not yet acknowledged), with no file of the candidate's
        seen["job_pending"] = self.job_sent is not None
        seen["timer_files"] = sorted(os.listdir(self.the_timer.in_dir))
        artifacts = real_export(self, *args, **kw)
        seen["exporter_dead"] = self.exporter.dead()
        return artifacts

    monkeypatch.setattr(run_mod.Run, "export", export)
    rec = evaluate(HONEST)
    assert rec["outcome"] in ("correct_tie", "correct_faster", "correct_slower"), rec["message"]
    assert seen["job_pending"] is True and seen["exporter_dead"] is True
    assert "baseline.jaxexport" in seen["timer_files"]
    assert not [f for f in seen["timer_files"] if f.startswith(("candidate", "kernel_"))]
    assert rec["phases"]["job_s"] > 0
