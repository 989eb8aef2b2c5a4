"""The rule that the Pallas kernels carry the work: the FLOP walk over traced jaxprs
(``jaxpr_cost``, in-process on small hand-written programs), the pure decision on hand-made
claims (``pallas_share.assess``), and through the real harness: the trivial-copy costume is
rejected, an honest kernel passes with its share recorded."""

import json

import pytest

from jaxbench.profiling import jaxpr_cost
from jaxbench.record import CATEGORIES
from jaxbench.verdict import pallas_share
from tests.jaxbench.adversarial import corpus

# --------------------------------------------------------------------------- assess (pure)


def _claim(outside, inside=0, top=None, by=None):
    return {
        "outside_flops": outside,
        "inside_flops": inside,
        "outside": by if by is not None else ({"dot_general": outside} if outside else {}),
        "top_outside": top
        if top is not None
        else ([{"primitive": "dot_general", "flops": outside, "where": "candidate.py:31"}] if outside else []),
        "pallas_calls": 1,
        "unknown_trip_loops": 0,
        "unaccounted": 0,
    }


def test_category_is_documented():
    assert pallas_share.CATEGORY in CATEGORIES["rejected"]


def test_mostly_outside_is_rejected_with_the_operation_and_line():
    res = pallas_share.assess(_claim(870), 1000, require_pallas=True)
    assert res["ok"] is False
    assert res["outside_share"] == pytest.approx(0.87)
    assert res["message"].startswith(
        "87% of the workload's FLOPs run outside Pallas kernels: dot_general at candidate.py:31"
    )
    assert res["total_flops"] == 1000 and res["outside_flops"] == 870
    assert res["top_outside"][0]["where"] == "candidate.py:31"
    json.dumps(res)


def test_threshold_edges():
    t = pallas_share.THRESHOLD
    assert t == 0.10
    at = pallas_share.assess(_claim(100), 1000, require_pallas=True)
    assert at["ok"] is True and at["outside_share"] == pytest.approx(0.1)
    above = pallas_share.assess(_claim(101), 1000, require_pallas=True)
    assert above["ok"] is False
    none = pallas_share.assess(_claim(0), 1000, require_pallas=True)
    assert none["ok"] is True and none["outside_share"] == 0.0
    assert none["message"] == "0.0% of the workload's FLOPs run outside Pallas kernels"


def test_rule_off_measures_but_never_rejects():
    res = pallas_share.assess(_claim(1000), 1000, require_pallas=False)
    assert res["ok"] is True and res["outside_share"] == 1.0
    assert "100% of the workload's FLOPs" in res["message"]


def test_more_than_the_reference_reads_as_all_of_it():
    res = pallas_share.assess(_claim(2500), 1000, require_pallas=True)
    assert res["ok"] is False and res["outside_share"] == 2.5
    assert res["message"].startswith("100% of the workload's FLOPs")


def test_per_workload_allowance():
    assert pallas_share.threshold_for("12p") == pallas_share.THRESHOLD
    t3 = pallas_share.threshold_for("3p")
    assert 0.72 < t3 < 0.8  # measured honest 3p shares: 68.8-71.3%
    mla = _claim(713)
    assert pallas_share.assess(mla, 1000, require_pallas=True, threshold=t3)["ok"] is True
    assert pallas_share.assess(mla, 1000, require_pallas=True)["ok"] is False


@pytest.mark.parametrize(
    "claim",
    [
        None,
        "a string",
        {},
        {"outside_flops": -5},
        {"outside_flops": float("nan")},
        {"outside_flops": True},
        {"outside_flops": "100"},
        {"error": "walk failed"},
    ],
)
def test_malformed_claims_leave_the_share_unmeasured(claim):
    res = pallas_share.assess(claim, 1000, require_pallas=True)
    assert res["ok"] is True and res["outside_share"] is None
    assert "not measured" in res["message"]
    assert pallas_share.summary(res) == "share of FLOPs outside Pallas: not measured"


def test_claim_fields_are_sanitised():
    top = [
        {"primitive": "x" * 500, "flops": 10, "where": "w" * 500},
        {"flops": -1},
        "junk",
        {"primitive": "mul", "flops": 5, "where": "candidate.py:3"},
    ]
    res = pallas_share.assess(_claim(10, top=top, by={"mul": 5, "bad": "x", "neg": -3}), 1000, require_pallas=True)
    assert len(res["top_outside"][0]["primitive"]) == 64
    assert len(res["top_outside"][0]["where"]) == 120
    assert [t["primitive"] for t in res["top_outside"]][1:] == ["mul"]
    assert res["by_primitive"] == {"mul": 5}


def test_workload_without_arithmetic():
    assert pallas_share.assess(_claim(0), 0, require_pallas=True)["outside_share"] == 0.0
    assert pallas_share.assess(_claim(5), 0, require_pallas=True)["ok"] is False


def test_summary_line():
    assert (
        pallas_share.summary(pallas_share.assess(_claim(30), 1000, require_pallas=False))
        == "share of FLOPs outside Pallas: 3.0%"
    )
    assert pallas_share.summary(None) == "share of FLOPs outside Pallas: not measured"


# --------------------------------------------------------------------------- the walk


def _cost(fn, *specs):
    import jax
    from jax.experimental.pallas import tpu as pltpu

    with pltpu.force_tpu_interpret_mode():
        return jaxpr_cost.program_cost(jax.jit(fn).trace(*specs).jaxpr)


def _spec(*shape, dtype="bfloat16"):
    import jax
    import jax.numpy as jnp

    return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))


def test_dot_and_conv_flops():
    import jax

    c = _cost(lambda a, b: a @ b, _spec(64, 32), _spec(32, 16))
    assert c["outside_flops"] == 2 * 64 * 16 * 32 and c["outside"] == {"dot_general": 65536}
    assert c["top_outside"][0]["where"].startswith("test_pallas_share.py:")
    conv = _cost(
        lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME"), _spec(2, 8, 10, 10), _spec(4, 8, 3, 3)
    )
    assert conv["outside_flops"] == 2 * (2 * 4 * 10 * 10) * (8 * 3 * 3)


def test_layout_glue_costs_nothing():
    import jax.numpy as jnp

    def glue(x, idx):
        y = jnp.pad(x.astype(jnp.float32).T.reshape(16, 64), ((0, 0), (1, 1)))
        z = jnp.concatenate([y, y[:, ::-1]], axis=0)[None]
        m = jnp.where(jnp.arange(66) < 10, z, 0.0)  # a mask select
        return jnp.take(m, idx, axis=1), idx * 2 + 1  # gather, integer index arithmetic

    c = _cost(glue, _spec(32, 32), _spec(4, dtype="int32"))
    assert c["outside_flops"] == 0 and c["outside"] == {}


def test_elementwise_and_reductions_one_per_element():
    import jax
    import jax.numpy as jnp

    def f(x):
        y = jnp.exp(x.astype(jnp.float32)) * 2.0  # exp, mul: 2 per element
        return y.sum(axis=-1), jax.nn.relu(x)  # reduce: 1; max: 1 (bf16)

    c = _cost(f, _spec(8, 128))
    assert c["outside_flops"] == 4 * 8 * 128
    assert c["outside"]["exp"] == c["outside"]["reduce_sum"] == 8 * 128


def test_control_flow_multiplicity():
    import jax
    import jax.numpy as jnp

    def scanned(x):
        return jax.lax.scan(lambda c, _: (c * 2.0, None), x, None, length=7)[0]

    assert _cost(scanned, _spec(4, 4, dtype="float32"))["outside_flops"] == 7 * 16

    def fori(x):
        return jax.lax.fori_loop(0, 5, lambda i, c: c + 1.0, x)

    assert _cost(fori, _spec(4, 4, dtype="float32"))["outside_flops"] == 5 * 16

    def cond(p, x):  # the expensive branch counts, whichever is taken
        return jax.lax.cond(p, lambda v: v, lambda v: jnp.tanh(v) * v, x)

    assert _cost(cond, _spec(dtype="bool"), _spec(4, 4, dtype="float32"))["outside_flops"] == 32

    def dyn_while(n, x):
        return jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 3.0), (0, x))[1]

    c = _cost(dyn_while, _spec(dtype="int32"), _spec(4, 4, dtype="float32"))
    assert c["outside_flops"] == 16 and c["unknown_trip_loops"] == 1

    @jax.custom_jvp
    def act(v):
        return v * jax.nn.sigmoid(v)

    act.defjvp(lambda p, t: (act(p[0]), t[0]))
    # pjit around custom_jvp_call: logistic and mul, once each per element
    assert _cost(lambda v: jax.jit(act)(v), _spec(4, 4, dtype="float32"))["outside_flops"] == 32


def test_nested_conds_are_walked_once_each():
    """A hostile candidate cannot make the walk exponential with deeply nested conds."""
    import jax
    import jax.numpy as jnp

    def nest(v, d):
        if d == 0:
            return jnp.tanh(v)
        return jax.lax.cond(v.sum() > 0, lambda u: nest(u, d - 1), lambda u: u, v)

    c = _cost(lambda v: nest(v, 40), _spec(4, 4, dtype="float32"))
    assert c["outside_flops"] == 40 * 16 + 16  # a reduce_sum per level, the tanh


def test_pallas_bodies_are_inside():
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, w_ref, o_ref):
        o_ref[...] = jnp.tanh(jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)).astype(o_ref.dtype)

    def matmul(x, w):
        out = pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((64, 32), x.dtype),
            grid=(4,),
            in_specs=[pl.BlockSpec((16, 48), lambda i: (i, 0)), pl.BlockSpec((48, 32), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((16, 32), lambda i: (i, 0)),
        )(x, w)
        return out * 2  # a scaling epilogue in XLA

    c = _cost(matmul, _spec(64, 48), _spec(48, 32))
    assert c["pallas_calls"] == 1
    assert c["inside_flops"] == 4 * (2 * 16 * 32 * 48 + 16 * 32)  # grid x body
    assert c["outside_flops"] == 64 * 32 and c["outside"] == {"mul": 2048}


# --------------------------------------------------------------------------- through the harness

COSTUME = "trivial_copy_pallas_around_xla.py"


def _adversarial(name):
    return corpus.source(corpus.ADVERSARIAL_DIR / name)


@pytest.mark.slow
def test_costume_is_rejected_and_an_honest_kernel_passes(evaluate):
    rec = evaluate(_adversarial(COSTUME))
    assert (rec["outcome"], rec["error_category"]) == ("rejected", "work_outside_pallas"), rec["message"]
    share = rec["pallas_share"]
    assert share["outside_share"] >= 0.99 and share["ok"] is False
    assert rec["message"].startswith("100% of the workload's FLOPs run outside Pallas kernels: ")
    assert "at candidate.py:" in rec["message"]
    assert rec["phase"] == "compile" and rec["timing"] is None

    rec = evaluate("correct_rmsnorm.py")
    assert rec["outcome"].startswith("correct_"), rec["message"]
    share = rec["pallas_share"]
    assert share["ok"] is True and share["outside_share"] == 0.0
    # a kernel's body is opaque in the exported program: what counts is that one runs unconditionally
    assert share["total_flops"] > 0 and share["kernels_unconditional"] >= 1


@pytest.mark.slow
def test_rule_off_records_the_share_without_rejecting(evaluate):
    rec = evaluate(_adversarial(COSTUME), require_pallas=False)
    assert rec["outcome"].startswith("correct_"), rec["message"]
    assert rec["pallas_share"]["outside_share"] >= 0.99 and rec["pallas_share"]["ok"] is True
    # rejected for another rule first: the share is recorded all the same
    rec = evaluate("no_pallas_plain_jax.py")
    assert (rec["outcome"], rec["error_category"]) == ("rejected", "no_pallas_call")
    assert rec["pallas_share"]["outside_share"] == pytest.approx(1.0)
    assert rec["pallas_share"]["kernels_unconditional"] == 0


@pytest.mark.slow
def test_lowering_precheck_measures_the_share():
    from jaxbench import harness

    low = harness.lower_for_platform("12p", _adversarial(COSTUME), platform="tpu", profile="full", require_pallas=True)
    assert (low["outcome"], low["error_category"]) == ("rejected", "work_outside_pallas"), low
    assert low["pallas_share"]["outside_share"] >= 0.99
