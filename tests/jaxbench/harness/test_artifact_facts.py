"""The exported artifact's facts (``jaxbench/profiling/hlo_cost.py``), its verifier
(``jaxbench/verdict/artifact.py``) and the Pallas share computed from them
(``pallas_share.assess_artifact``): the walker on small programs with known FLOPs, exported
and deserialized as the timer child does; the verifier's categories; the rule's fail-closed
cases; the honest examples passing and the costumes (``artifact_costumes/``) failing."""

import ast
import importlib.util
import json
import pathlib

import pytest

from jaxbench import workloads
from jaxbench.profiling import hlo_cost
from jaxbench.record import CATEGORIES
from jaxbench.verdict import artifact, pallas_share
from tests.jaxbench.adversarial import corpus
from tests.jaxbench.kernels import _candidates as kc

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "jaxbench" / "kernels" / "examples"
COSTUMES = pathlib.Path(__file__).parent / "artifact_costumes"


def _export(fn, *specs, platform="cpu", disabled=()):
    import jax

    with kc.tpu_target() if platform == "tpu" else _null():
        exp = jax.export.export(jax.jit(fn), platforms=[platform], disabled_checks=list(disabled))(*specs)
    return bytes(exp.serialize())


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _facts(fn, *specs, **kw):
    facts = hlo_cost.facts_from_bytes(_export(fn, *specs, **kw))
    json.dumps(facts)  # JSON-safe
    return facts


def _f32(*shape):
    import jax
    import jax.numpy as jnp

    return jax.ShapeDtypeStruct(shape, jnp.float32)


def _copy_kernel(x):
    import jax
    from jax.experimental import pallas as pl

    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


# --------------------------------------------------------------------------- the walker


def test_matmul_counts_2mnk_and_the_signature():
    facts = _facts(lambda a, b: a @ b, _f32(64, 32), _f32(32, 16))
    assert facts["outside_flops"] == 2 * 64 * 16 * 32
    assert facts["by_op"] == {"dot_general": 2 * 64 * 16 * 32}
    assert facts["uncountable"] == []
    assert facts["in_avals"] == [[[64, 32], "float32"], [[32, 16], "float32"]]
    assert facts["out_avals"] == [[[64, 16], "float32"]]
    assert facts["platforms"] == ["cpu"] and facts["nr_devices"] == 1
    assert facts["custom_calls"] == {} and facts["host_callbacks"] == []
    assert facts["kernels"]["total"] == 0
    assert facts["module_bytes"] > 0 and not facts["nontrivial_shardings"] and facts["ordered_effects"] == []


def test_a_program_above_the_operation_cap_is_counted_not_walked(monkeypatch):
    """The reader stops at the count when it is over the cap (the timer's ``max_ops``): the
    refusal is the count's (artifact_too_large), not a race between the costly walk and the
    reading's CPU limit that a slower machine loses (compile_timeout)."""
    import jax
    from jax.experimental import pallas as pl  # noqa: F401 - the same imports as a candidate's

    def unrolled(x):
        for _ in range(600):
            x = x * 1.0001 + 0.5
        return x

    data = _export(unrolled, _f32(8, 128))
    exp = jax.export.deserialize(bytearray(data))
    full = hlo_cost.artifact_facts(exp)
    assert full["ops"] > 1200 and full["by_op"]["multiply"] > 0
    capped = hlo_cost.artifact_facts(exp, max_ops=1000)
    assert capped["ops"] == full["ops"]
    assert capped["by_op"] == {} and capped["outside_flops"] == 0 and capped["kernels"]["total"] == 0
    assert capped["in_avals"] == full["in_avals"] and capped["platforms"] == ["cpu"]
    # within the cap, the cap changes nothing
    assert hlo_cost.artifact_facts(exp, max_ops=full["ops"]) == full
    monkeypatch.setattr(artifact, "MAX_OPS", 1000)
    bad = artifact.verify(capped, [[[8, 128], "float32"]], [[[8, 128], "float32"]], "cpu")
    assert bad is not None and bad[0] == "artifact_too_large" and f"{full['ops']:,} operations" in bad[1]


def test_elementwise_reductions_and_glue():
    import jax.numpy as jnp

    # exp: 1/elt, sum: 1/input elt, reshape/transpose/convert free
    facts = _facts(lambda x: jnp.exp(x).T.reshape(-1).astype(jnp.bfloat16).astype(jnp.float32).sum(), _f32(8, 128))
    assert facts["by_op"] == {"exponential": 1024, "reduce": 1024}
    assert facts["uncountable"] == []


def test_fori_loop_of_matmuls_times_its_trip_count():
    from jax import lax

    facts = _facts(lambda a, w: lax.fori_loop(0, 5, lambda i, x: x @ w, a), _f32(64, 64), _f32(64, 64))
    assert facts["outside_flops"] == 5 * 2 * 64**3
    assert facts["uncountable"] == []
    facts = _facts(lambda a, w: lax.fori_loop(2, 9, lambda i, x: x @ w, a), _f32(64, 64), _f32(64, 64))
    assert facts["outside_flops"] == 7 * 2 * 64**3


def test_scan_times_its_length():
    from jax import lax

    def f(a, ws):
        return lax.scan(lambda x, w: (x @ w, None), a, ws)[0]

    facts = _facts(f, _f32(16, 32), _f32(3, 32, 32))
    assert facts["outside_flops"] == 3 * 2 * 16 * 32 * 32
    assert facts["uncountable"] == []


def test_cond_counts_the_most_expensive_branch():
    import jax.numpy as jnp
    from jax import lax

    def f(x, w):
        return lax.cond(x[0, 0] > 0, lambda v: jnp.tanh(v), lambda v: v @ w, x)

    facts = _facts(f, _f32(32, 32), _f32(32, 32))
    assert facts["by_op"] == {"dot_general": 2 * 32**3}
    assert facts["uncountable"] == []


def test_while_with_a_data_dependent_bound_is_uncountable():
    import jax.numpy as jnp
    from jax import lax

    def f(x):
        n = x[0, 0].astype(jnp.int32)
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]

    facts = _facts(f, _f32(8, 128))
    assert len(facts["uncountable"]) == 1
    assert facts["uncountable"][0].startswith("while loop with a data-dependent trip count at test_artifact_facts.py:")


def test_while_with_unknown_bound_but_no_work_is_fine():
    import jax.numpy as jnp
    from jax import lax

    def f(x):
        n = x[0, 0].astype(jnp.int32)
        i = lax.while_loop(lambda i: i < n, lambda i: i + 1, 0)
        return x + i.astype(jnp.float32)

    facts = _facts(f, _f32(8, 128))
    assert facts["uncountable"] == []
    assert facts["outside_flops"] == 1024


def test_func_call_is_followed_with_multiplicity():
    # JAX inlines nested jit today; a module with a private function called twice (as the
    # bodies of loops and composites are) is written by hand
    text = _module(
        "    %0 = func.call @mm(%arg0, %arg0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "    %1 = func.call @mm(%0, %arg0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "    return %1 : tensor<4x4xf32>",
        "  func.func private @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>)"
        " -> tensor<4x4xf32>\n"
        "    %1 = stablehlo.tanh %0 : tensor<4x4xf32>\n"
        "    return %1 : tensor<4x4xf32>\n  }\n"
        "  func.func private @never_called(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "    %0 = stablehlo.exponential %a : tensor<4x4xf32>\n    return %0 : tensor<4x4xf32>\n  }\n",
    )
    facts = hlo_cost.module_cost(text)
    assert facts["by_op"] == {"dot_general": 2 * 2 * 4**3, "tanh": 2 * 16}
    assert facts["uncountable"] == []


def test_kernels_unconditional_in_a_branch_and_in_a_loop():
    from jax import lax

    plain = _facts(_copy_kernel, _f32(8, 128), platform="tpu")
    assert plain["custom_calls"] == {"tpu_custom_call": 1}
    assert plain["kernels"]["unconditional"] == 1 and plain["kernels"]["conditional"] == 0
    assert plain["outside_flops"] == 0 and plain["uncountable"] == []

    in_cond = _facts(lambda x: lax.cond(x[0, 0] > 0, _copy_kernel, lambda v: v, x), _f32(8, 128), platform="tpu")
    assert in_cond["kernels"]["unconditional"] == 0 and in_cond["kernels"]["conditional"] == 1

    in_loop = _facts(lambda x: lax.fori_loop(0, 3, lambda i, v: _copy_kernel(v), x), _f32(8, 128), platform="tpu")
    assert in_loop["kernels"] == {
        "total": 1,
        "unconditional": 1,
        "conditional": 0,
        "by_target": {"tpu_custom_call": 1},
        "sites": in_loop["kernels"]["sites"],
    }


def test_opaque_custom_call_is_uncountable_and_listed():
    import jax
    from jax import export

    def f(x):
        return jax.ffi.ffi_call("secret_work", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    facts = _facts(f, _f32(8, 128), disabled=[export.DisabledSafetyCheck.custom_call("secret_work")])
    assert facts["custom_calls"] == {"secret_work": 1}
    assert any("opaque custom call 'secret_work'" in r for r in facts["uncountable"])


def _module(body: str, extra: str = "") -> str:
    return (
        "module {\n  func.func public @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        + body
        + "\n  }\n"
        + extra
        + "}\n"
    )


def test_hand_written_modules_fail_closed():
    assert hlo_cost.module_cost("this is not MLIR")["uncountable"][0].startswith("the program could not be parsed")
    # recursion
    rec = _module(
        "    %0 = func.call @f(%arg0) : (tensor<4x4xf32>) -> tensor<4x4xf32>\n    return %0 : tensor<4x4xf32>",
        "  func.func private @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "    %0 = func.call @f(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "    %1 = stablehlo.add %0, %0 : tensor<4x4xf32>\n    return %1 : tensor<4x4xf32>\n  }\n",
    )
    assert any("recursive call" in r for r in hlo_cost.module_cost(rec)["uncountable"])
    # an operation the model does not know
    unknown = _module(
        "    %0 = stablehlo.cholesky %arg0, lower = true : tensor<4x4xf32>\n"
        '    %1 = "stablehlo.collective_permute"(%0) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}'
        " : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "    return %1 : tensor<4x4xf32>"
    )
    res = hlo_cost.module_cost(unknown)
    assert res["by_op"] == {"cholesky": 64}
    assert any("does not know" in r for r in res["uncountable"]), res
    # a reduction whose body does tensor work
    body = _module(
        "    %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [0, 1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<f32>\n"
        "     reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
        "      %big = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<512x512xf32>\n"
        "      %m = stablehlo.dot_general %big, %big, contracting_dims = [1] x [0] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>\n"
        "      %s = stablehlo.add %a, %b : tensor<f32>\n"
        "      stablehlo.return %s : tensor<f32>\n    }\n"
        "    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x4xf32>\n"
        "    return %1 : tensor<4x4xf32>"
    )
    assert any("body that holds" in r for r in hlo_cost.module_cost(body)["uncountable"])


def test_location_lexer_respects_quotes():
    toks = hlo_cost._lex('loc("a\\"b:1:2"("candidate.py":31:4))')
    assert ("s", 'a"b:1:2') in toks and ("s", "candidate.py") in toks


def test_cost_file_imports_only_stdlib_and_jax():
    """The timer child loads hlo_cost.py by path from its input directory: no sibling import."""
    path = pathlib.Path(hlo_cost.__file__)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module.split(".")[0] in {"__future__", "jax", "jaxlib", "math", "os"}
        elif isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] in {"jax", "jaxlib", "math", "os"} for a in node.names)
    spec = importlib.util.spec_from_file_location("_hlo_cost_by_path", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.facts_from_bytes(_export(lambda a: a * 2.0, _f32(4, 4)))["outside_flops"] == 16


# --------------------------------------------------------------------------- the verifier


def _good_tpu_facts():
    return _facts(_copy_kernel, _f32(8, 128), platform="tpu")


IN = [((8, 128), "float32")]
OUT = [("float32", (8, 128))]  # prepare's out_specs order: (dtype, shape)


def test_verify_accepts_a_kernel_on_tpu_and_refuses_it_on_cpu():
    facts = _good_tpu_facts()
    assert artifact.verify(facts, IN, OUT, "tpu") is None
    cpu = dict(facts, platforms=["cpu"])
    cat, msg = artifact.verify(cpu, IN, OUT, "cpu")
    assert cat == "disallowed_custom_call" and "'tpu_custom_call'" in msg and "interpreter" in msg


def test_verify_categories():
    good = _good_tpu_facts()
    cases = {
        "signature_mismatch": [
            dict(good, in_avals=[[[8, 256], "float32"]]),
            dict(good, in_avals=[[[8, 128], "bfloat16"]]),
            dict(good, out_avals=[[[8, 128], "float32"], [[1], "float32"]]),
            dict(good, out_avals=[[[8, 128], "bfloat16"]]),
            dict(good, in_avals=[]),
        ],
        "disallowed_custom_call": [dict(good, custom_calls={"tpu_custom_call": 1, "secret_work": 1})],
        "host_callback": [dict(good, host_callbacks=["xla_ffi_python_cpu_callback"])],
        "artifact_too_large": [dict(good, module_bytes=artifact.MAX_MODULE_BYTES + 1)],
        "multi_device": [dict(good, nr_devices=2), dict(good, nontrivial_shardings=True)],
        "ordered_effects": [dict(good, ordered_effects=["IOEffect"])],
        "wrong_platform": [dict(good, platforms=["cuda"])],
        "artifact_unreadable": [None, {}, dict(good, module_bytes="big")],
    }
    for category, variants in cases.items():
        assert category in CATEGORIES["rejected"], category
        for facts in variants:
            got = artifact.verify(facts, IN, OUT, "tpu")
            assert got is not None and got[0] == category, (category, got)
            assert got[1]
    assert artifact.verify(dict(good, in_avals=[[[8, 256], "float32"]]), IN, OUT, "tpu")[1] == (
        "input 0 is float32[8,256], the workload's is float32[8,128] "
        "(workload(*inputs) must keep the workload's signature)"
    )
    # a float32 result where the workload's is bfloat16 (the public 3p and 11p optimized files:
    # float32 RoPE tables promote the attention, gmm's default preferred_element_type) is a
    # different program, not a more precise answer: rejected, as the correctness check would
    widened = artifact.verify(good, IN, [("bfloat16", (8, 128))], "tpu")
    assert widened == (
        "signature_mismatch",
        "output 0 is float32[8,128], the workload's is bfloat16[8,128] "
        "(workload(*inputs) must keep the workload's signature)",
    )


def test_callbacks_and_host_transfers_are_found():
    # jax.export refuses to serialize host callbacks today; a forged artifact may hold them
    text = _module(
        '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true}'
        " : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "    %t = stablehlo.create_token : !stablehlo.token\n"
        "    %1 = \"stablehlo.send\"(%0, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,"
        " is_host_transfer = true} : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token\n"
        "    return %0 : tensor<4x4xf32>"
    )
    res = hlo_cost.module_cost(text)
    assert res["host_callbacks"] == ["xla_ffi_python_cpu_callback", "stablehlo.send"]
    assert res["custom_calls"] == {"xla_ffi_python_cpu_callback": 1}
    assert any("opaque custom call" in r for r in res["uncountable"])
    assert any("transfer to or from the host" in r for r in res["uncountable"])
    facts = dict(_good_tpu_facts(), **{k: res[k] for k in ("host_callbacks", "custom_calls")})
    assert artifact.verify(facts, IN, OUT, "tpu")[0] == "host_callback"


# --------------------------------------------------------------------------- assess_artifact


def _share_facts(outside, uncond=1, cond=0, reasons=()):
    return {
        "outside_flops": outside,
        "by_op": {"dot_general": outside} if outside else {},
        "top_outside": [{"primitive": "dot_general", "flops": outside, "where": "candidate.py:7"}] if outside else [],
        "kernels": {"total": uncond + cond, "unconditional": uncond, "conditional": cond},
        "uncountable": list(reasons),
    }


def test_assess_artifact_threshold_and_the_largest_operation():
    ok = pallas_share.assess_artifact(_share_facts(100), 1000, True)
    assert ok["ok"] and ok["outside_share"] == pytest.approx(0.1) and ok["category"] == ""
    bad = pallas_share.assess_artifact(_share_facts(101), 1000, True)
    assert not bad["ok"] and bad["category"] == pallas_share.CATEGORY
    worse = pallas_share.assess_artifact(_share_facts(870), 1000, True)
    assert worse["message"] == (
        "87% of the workload's FLOPs run outside Pallas kernels: dot_general at candidate.py:7 "
        "(at most 10% may; 870 of 1e+03 FLOPs)"
    )
    json.dumps(bad)
    # the facts of the reference are accepted as the denominator
    assert pallas_share.assess_artifact(_share_facts(0), {"outside_flops": 1000}, True)["outside_share"] == 0.0


def test_assess_artifact_fails_closed():
    for cat in (pallas_share.UNCOUNTABLE, pallas_share.NO_KERNEL):
        assert cat in CATEGORIES["rejected"]
    unc = pallas_share.assess_artifact(
        _share_facts(0, reasons=["while loop with a data-dependent trip count at x"]), 1000, True
    )
    assert not unc["ok"] and unc["category"] == pallas_share.UNCOUNTABLE
    assert "while loop with a data-dependent trip count" in unc["message"]
    assert unc["unknown_trip_loops"] == 1
    none = pallas_share.assess_artifact(_share_facts(0, uncond=0), 1000, True)
    assert not none["ok"] and none["category"] == pallas_share.NO_KERNEL
    assert none["message"].startswith("no Pallas kernel runs unconditionally")
    branch = pallas_share.assess_artifact(_share_facts(0, uncond=0, cond=1), 1000, True)
    assert not branch["ok"] and "conditional branch" in branch["message"]
    for malformed in (None, {}, {"outside_flops": -1, "uncountable": []}, {"outside_flops": 5}, "facts"):
        res = pallas_share.assess_artifact(malformed, 1000, True)
        assert not res["ok"], malformed
    # the rule off: measured and shown, never decisive
    off = pallas_share.assess_artifact(_share_facts(900, uncond=0, reasons=["x"]), 1000, False)
    assert off["ok"] and off["category"] == "" and off["outside_share"] == pytest.approx(0.9)


# --------------------------------------------------------------------------- honest kernels, costumes


def _candidate_facts(source, wid, profile="small"):
    import jax

    wl = workloads.get(wid)
    mod = kc.load_candidate(source, wl, profile, filename="candidate.py")
    with kc.tpu_target():
        exp = jax.export.export(jax.jit(mod.workload), platforms=["tpu"])(*wl.input_specs(profile))
    return wl, hlo_cost.facts_from_bytes(bytes(exp.serialize()))


def _ref(wl, profile="small"):
    from jaxbench.harness import prepare

    ref = prepare.reference_hlo_cost(wl, profile)
    assert ref["uncountable"] == [] and ref["outside_flops"] > 0
    return ref


@pytest.mark.parametrize(
    "path", sorted(p for p in EXAMPLES.glob("*.py") if p.name != "__init__.py"), ids=lambda p: p.name
)
def test_honest_examples_pass(path):
    wid = path.name.split("-")[0]
    wl, facts = _candidate_facts(path.read_text(), wid)
    ref = _ref(wl)
    assert artifact.verify(facts, wl.input_specs("small"), _out_specs(wl), "tpu") is None  # ShapeDtypeStructs
    res = pallas_share.assess_artifact(facts, ref, True, pallas_share.threshold_for(wid))
    assert res["ok"], res["message"]
    assert res["outside_share"] == 0.0  # every example keeps all its arithmetic in its kernels


def _out_specs(wl, profile="small"):
    import jax

    outs = jax.eval_shape(wl.baseline(profile), *wl.input_specs(profile))
    return [(tuple(o.shape), o.dtype.name) for o in jax.tree_util.tree_leaves(outs)]


def _specs_pairs(specs):
    return [(tuple(s.shape), s.dtype.name) for s in specs]


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("cond_kernel_never_runs.py", pallas_share.NO_KERNEL),
        ("while_data_dependent.py", pallas_share.UNCOUNTABLE),
        ("opaque_custom_call.py", pallas_share.UNCOUNTABLE),
    ],
)
def test_costumes_fail_closed(name, category):
    wl, facts = _candidate_facts((COSTUMES / name).read_text(), "12p")
    res = pallas_share.assess_artifact(facts, _ref(wl), True, pallas_share.threshold_for("12p"))
    assert not res["ok"] and res["category"] == category, res["message"]
    verdict = artifact.verify(facts, _specs_pairs(wl.input_specs("small")), _out_specs(wl), "tpu")
    if name == "opaque_custom_call.py":
        assert verdict is not None and verdict[0] == "disallowed_custom_call"
    else:
        assert verdict is None  # a well-formed artifact: only the share rule catches it


def test_trivial_copy_costume_is_all_outside():
    src = corpus.source(corpus.ADVERSARIAL_DIR / "trivial_copy_pallas_around_xla.py")
    wl, facts = _candidate_facts(src, "12p")
    res = pallas_share.assess_artifact(facts, _ref(wl), True, pallas_share.threshold_for("12p"))
    assert not res["ok"] and res["category"] == pallas_share.CATEGORY
    assert res["outside_share"] == pytest.approx(1.0)
    assert res["top_outside"][0]["where"].startswith("candidate.py:")


def test_cpu_export_interprets_kernels_into_plain_hlo():
    """On the cpu target the export child lowers kernels through the interpreter: no custom
    call remains and the verifier accepts it for cpu; the TPU export is refused there."""
    import jax

    wl = workloads.get("12p")
    mod = kc.load_candidate((EXAMPLES / "12p-rmsnorm.py").read_text(), wl, "small", filename="candidate.py")
    with kc.gpu_interpret():  # the generic interpreter, as the export child uses
        exp = jax.export.export(jax.jit(mod.workload), platforms=["cpu"])(*wl.input_specs("small"))
    facts = hlo_cost.facts_from_bytes(bytes(exp.serialize()))
    assert facts["custom_calls"] == {} and facts["kernels"]["total"] == 0
    assert artifact.verify(facts, wl.input_specs("small"), _out_specs(wl), "cpu") is None
    _, tpu = _candidate_facts((EXAMPLES / "12p-rmsnorm.py").read_text(), "12p")
    assert artifact.verify(dict(tpu, platforms=["cpu"]), wl.input_specs("small"), _out_specs(wl), "cpu")[0] == (
        "disallowed_custom_call"
    )


def test_interpreted_grid_loop_is_counted():
    """The interpreter's grid loop (bound carried through the loop, from a constant product)
    has a known trip count: an interpreted GEMM counts as the GEMM's FLOPs."""
    import jax

    wl = workloads.get("8p")
    mod = kc.load_candidate((EXAMPLES / "8p-gemm.py").read_text(), wl, "small", filename="candidate.py")
    with kc.gpu_interpret():
        exp = jax.export.export(jax.jit(mod.workload), platforms=["cpu"])(*wl.input_specs("small"))
    facts = hlo_cost.facts_from_bytes(bytes(exp.serialize()))
    assert facts["uncountable"] == []
    ref = _ref(wl)["outside_flops"]
    assert ref <= facts["outside_flops"] <= 1.01 * ref


def _loop(step: str, bound: str = "%c3") -> str:
    return _module(
        "    %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
        f"    %s = stablehlo.constant dense<{step}> : tensor<i32>\n"
        "    %r:2 = stablehlo.while(%i = %c0, %x = %arg0) : tensor<i32>, tensor<4x4xf32>\n"
        "     cond {\n"
        f"      %p = stablehlo.compare LT, %i, {bound}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %p : tensor<i1>\n"
        "    } do {\n"
        "      %n = stablehlo.add %i, %s : tensor<i32>\n"
        "      %y = stablehlo.exponential %x : tensor<4x4xf32>\n"
        "      stablehlo.return %n, %y : tensor<i32>, tensor<4x4xf32>\n"
        "    }\n"
        "    return %r#1 : tensor<4x4xf32>"
    )


def test_loop_shapes():
    assert hlo_cost.module_cost(_loop("1"))["by_op"] == {"exponential": 3 * 16}
    assert hlo_cost.module_cost(_loop("2"))["by_op"] == {"exponential": 2 * 16}
    for step in ("0", "-1"):  # never ends, or not by the count: untrusted
        res = hlo_cost.module_cost(_loop(step))
        assert res["uncountable"] and res["uncountable"][0].startswith("while loop with a data-dependent trip count")
    res = hlo_cost.module_cost(_loop("1", bound="%i"))  # i < i: not the fori shape
    assert res["uncountable"]
