"""Audit of every registered workload (TRUST.md point 4, WORKLOADS.md's degenerate-input
policy), at the small profile; the full profile only by abstract evaluation.

For each workload: metadata valid and resolvable; inputs deterministic per key, different
across keys, with the specified dtypes; outputs finite and well above the tolerance; and the
no-op exploits impossible: zeros, a constant, an input passed through and the reference for
another key all FAIL the harness's comparison, and re-drawing any input changes the output
enough to fail it, except the inputs a workload declares in ``insensitive_inputs`` (a
documented degeneracy), for which the output must NOT change.
"""

import functools
import json
import re

import jax
import numpy as np
import pytest

from jaxbench import workloads
from jaxbench.verdict.numerics import allclose_report, exact_rule_report
from jaxbench.workloads.base import CATEGORIES, ID_LETTERS, PROFILES, SOURCES

try:
    ALL = workloads.all_workloads()
    LOAD_ERROR = None
except Exception as exc:  # one broken module must not hide the audit of the others
    ALL, LOAD_ERROR = [], exc

IDS = [w.id for w in ALL]
# what the per-workload checks run on: each workload's small profile, or each of its small
# configurations ("64p@small/ce_small") where it has several
AUDITED = [w.id if c == "small" else f"{w.id}@{c}" for w in ALL for c in w.cases("small")]
LEVEL_ONE = [w for w in ALL if w.level == 1]
EXPECTED_IDS = [f"{i}p" for i in range(1, 18)] + [f"{i}k" for i in range(18, 51)]
# level 2's twins of level-1 tasks, timed against JAX's own Pallas TPU kernels (DESIGN.md, "Levels")
EXPECTED_LEVEL_TWO = ["l2-1p", "l2-2p", "l2-4p", "l2-6p", "l2-7p", "l2-8p", "l2-11p"]
# level 2's new tasks (numbered from 51), in the public suite's order
EXPECTED_NEW = ["64p"]
EXPECTED_EXPERT = {"1p", "2p", "3p", "4p", "6p", "7p", "8p", "11p"}
KEY_A, KEY_B = 0, 1
# "Well above the tolerance": at least a quarter of the elements that are not exactly zero
# (ReLU and padding zeros are structure, not smallness) exceed 5 x atol, and zeros fail on at
# least 5% of all elements.
MAGNITUDE_FACTOR = 5.0
MIN_FRACTION_LARGE = 0.25
MIN_FRACTION_ZERO_FAILS = 0.05


def test_registry_loads():
    if LOAD_ERROR is not None:
        raise LOAD_ERROR
    assert ALL, "no workloads registered"


def test_suite_complete():
    # Expected to fail until every workload module is written.
    assert [w.id for w in LEVEL_ONE] == EXPECTED_IDS, sorted(set(EXPECTED_IDS) - set(IDS))
    assert len(LEVEL_ONE) == 50
    # level 1 first, then level 2 in the public suite's order
    assert IDS == EXPECTED_IDS + EXPECTED_LEVEL_TWO + EXPECTED_NEW


def test_ids_slugs_and_public_names_unique():
    for attr in ("id", "slug"):
        values = [getattr(w, attr) for w in ALL]
        assert len(values) == len(set(values)), attr
    # a public name is unique within its level: level 2 reuses 1p-11p's folder names
    names = [(w.level, w.public_name) for w in ALL]
    assert len(names) == len(set(names))


def test_a_level_two_twin_is_level_one_s_task_under_its_level():
    for wid in EXPECTED_LEVEL_TWO:
        twin = workloads.get(wid)
        one = workloads.get(twin.bare_id)
        assert twin.level == 2 and one.level == 1 and twin.public_name == one.public_name
        assert twin.pallas_baseline is not None and "tpu" in twin.platforms and "gpu" not in twin.platforms
        assert twin.platform_note
        assert twin.upstream.file == f"JAXBench/benchmark/level2/{one.public_name}/baseline.py"
        assert workloads.get(f"level2/{one.public_name}") is twin and workloads.get(one.public_name) is one


def test_expert_set():
    present = set(IDS) & set(EXPECTED_IDS)
    assert {w.id for w in ALL if w.expert} == EXPECTED_EXPERT & present


# ---------------------------------------------------------------------------------------------
# Per-workload cached state (inputs, the jitted baseline, its outputs) at the small profile.


@pytest.fixture(scope="module", params=AUDITED)
def wid(request):
    """A module-scoped parameter, so that pytest runs all checks of one workload together: a
    workload ID, or ``<id>@<case>`` for one configuration of a multi-configuration workload."""
    return request.param


def _audit(wid):
    """The workload of an audit parameter and its small case (``small``, or ``small/<name>``)."""
    name, _, case = wid.partition("@")
    return workloads.get(name), case or "small"


def _full(case):
    """The full profile's case of the same configuration."""
    return "full" + case.removeprefix("small")


@functools.lru_cache(maxsize=4)
def _fn(wid):
    wl, small = _audit(wid)
    return jax.jit(wl.baseline(small))


def _jitted_create(wid):
    """Input creation under jit, as the harness does it (a new function: traced afresh).
    Eager creation may differ in the last bit where XLA fuses the scaling into the draw."""
    wl, small = _audit(wid)
    return jax.jit(lambda key: tuple(wl.create_inputs(small, key)))


_create = functools.lru_cache(maxsize=4)(_jitted_create)


@functools.lru_cache(maxsize=2)
def _case(wid, key):
    inputs = jax.block_until_ready(_create(wid)(jax.random.key(key)))
    out = jax.block_until_ready(_fn(wid)(*inputs))
    return inputs, out


def _leaves(out):
    return [np.asarray(leaf, np.float32) for leaf in jax.tree_util.tree_leaves(out)]


def _is_int(a):
    return np.issubdtype(np.asarray(a).dtype, np.integer)


def _is_float(a):
    return jax.numpy.issubdtype(a.dtype, jax.numpy.floating)


@functools.lru_cache(maxsize=4)
def _exact(wid, key):
    """The exact answer (float32 from the same bf16 inputs) for KEY ``key``."""
    inputs, _ = _case(wid, key)
    wl, small = _audit(wid)
    return _leaves(jax.jit(wl.exact(small))(*inputs))


def _leaf_passes(wl, wid, key, k, cand_leaf):
    """The harness rule (exact answer, XLA's own error as the allowance) on output leaf k."""
    xla = _leaves(_case(wid, key)[1])[k]
    return exact_rule_report(_exact(wid, key)[k], xla, np.asarray(cand_leaf, np.float32), wl.atol, wl.rtol)["passed"]


def _passes(wl, wid, key, cand):
    """The harness rule on every output leaf, for the inputs of KEY ``key``."""
    cands = _leaves(cand)
    assert len(cands) == len(_exact(wid, key))
    return all(_leaf_passes(wl, wid, key, k, c) for k, c in enumerate(cands))


def _output_independent(wl):
    """A degenerate workload whose every input is declared insensitive."""
    return bool(wl.degenerate) and set(wl.insensitive_inputs) >= set(wl.input_names)


def _documented_float32(wl, name):
    text = wl.notes + " " + (wl.degenerate or "")
    return name in text and ("float32" in text or "f32" in text)


# ---------------------------------------------------------------------------------------------
# Metadata


def test_metadata_valid(wid):
    wl, small = _audit(wid)
    assert re.fullmatch(r"(l2-)?\d{1,2}[pk]-[a-z0-9]+(-[a-z0-9]+)*", wl.slug), wl.slug
    assert wl.public_name.startswith(wl.bare_id + "_") and " " not in wl.public_name
    assert wl.title.strip() and wl.description.strip() and wl.model.strip()
    assert wl.source in SOURCES and wl.category in CATEGORIES
    assert wl.id.endswith(ID_LETTERS[wl.source])
    if wl.level == 1:
        assert wl.source == ("maxtext" if wl.id.endswith("p") else "kernelbench-l2")
    if wl.source == "kernelbench-l2":
        assert isinstance(wl.kernelbench_id, int) and 1 <= wl.kernelbench_id <= 100
    else:
        assert wl.kernelbench_id is None
    assert set(wl.profiles) == set(PROFILES)
    for profile in PROFILES:
        for case in wl.cases(profile):
            wl.static_params(case)  # every keyword-only value is present
    assert len(wl.input_names) == len(set(wl.input_names))
    assert set(wl.insensitive_inputs) <= set(wl.input_names), wl.insensitive_inputs
    if wl.degenerate is not None:
        assert wl.degenerate.strip()
    if (wl.atol, wl.rtol) != (1e-2, 1e-2):
        assert wl.tolerance_reason and wl.tolerance_reason.strip()
    json.dumps(wl.summary())  # JSON-ready
    flops, nbytes = wl.cost(small)
    assert flops > 0 and nbytes > 0
    assert wl.cost(_full(small))[0] > flops


def test_get_resolves_id_slug_and_public_name(wid):
    wl, small = _audit(wid)
    # a later level's twin is named with its level: its public name alone is level 1's task
    public = wl.public_name if wl.level == 1 else f"level{wl.level}/{wl.public_name}"
    for name in (
        wl.id,
        wl.slug,
        public,
        public + ".py",
        wl.id.upper(),
        "0" + wl.id if len(wl.id) == 2 else wl.id,
    ):
        assert workloads.get(name) is wl, name


def test_get_rejects_unknown_names():
    for name in ("0p", "51k", "12k-rmsnorm", "not-a-workload", ""):
        with pytest.raises(KeyError):
            workloads.get(name)


# ---------------------------------------------------------------------------------------------
# Inputs


def test_inputs_deterministic_typed_and_key_dependent(wid):
    wl, small = _audit(wid)
    a, _ = _case(wid, KEY_A)
    again = _jitted_create(wid)(jax.random.key(KEY_A))  # traced again: no hidden state
    b, _ = _case(wid, KEY_B)
    assert len(a) == len(wl.input_names)
    for x, y in zip(a, again):
        assert x.dtype == y.dtype and np.array_equal(np.asarray(x), np.asarray(y))
    assert any(not np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))
    specs = wl.input_specs(small)
    for name, x, spec in zip(wl.input_names, a, specs):
        assert (x.shape, x.dtype) == (spec.shape, spec.dtype), name
        assert isinstance(x, jax.Array), name
        if _is_int(x):
            assert x.dtype == np.int32, name
        else:
            assert _is_float(x), (name, x.dtype)
            assert x.dtype == jax.numpy.bfloat16 or _documented_float32(wl, name), (
                f"{name} is {x.dtype}: bf16 expected unless the notes document it"
            )


def test_float_inputs_not_zero_or_constant(wid):
    wl, small = _audit(wid)
    inputs, _ = _case(wid, KEY_A)
    for name, x in zip(wl.input_names, inputs):
        if _is_int(x):
            continue
        xf = np.asarray(x, np.float32)
        assert np.all(np.isfinite(xf)), name
        assert np.any(xf != 0), f"{name} is all zeros"
        if xf.size > 1 and name not in wl.insensitive_inputs:
            assert not np.all(xf == xf.flat[0]), f"{name} is constant ({xf.flat[0]})"


def test_full_profile_specs_by_abstract_evaluation(wid):
    wl, small = _audit(wid)
    full_in = wl.input_specs(_full(small))
    small_in = wl.input_specs(small)
    assert len(full_in) == len(small_in) == len(wl.input_names)
    for name, f, s in zip(wl.input_names, full_in, small_in):
        assert f.dtype == s.dtype and len(f.shape) == len(s.shape), name
        assert np.prod(f.shape, dtype=np.int64) >= np.prod(s.shape, dtype=np.int64), name
    full_out = jax.tree_util.tree_leaves(wl.output_spec(_full(small)))
    small_out = jax.tree_util.tree_leaves(wl.output_spec(small))
    assert [(o.dtype, len(o.shape)) for o in full_out] == [(o.dtype, len(o.shape)) for o in small_out]


# ---------------------------------------------------------------------------------------------
# Outputs and the no-op exploits


def test_outputs_finite_and_well_above_tolerance(wid):
    wl, small = _audit(wid)
    _, out = _case(wid, KEY_A)
    spec = jax.tree_util.tree_leaves(wl.output_spec(small))
    leaves = _leaves(out)
    assert [(l.shape) for l in leaves] == [s.shape for s in spec]
    threshold = MAGNITUDE_FACTOR * wl.atol
    for k, y in enumerate(leaves):
        assert np.all(np.isfinite(y)), f"output {k} has NaN/Inf"
        zero = allclose_report(y, np.zeros_like(y), wl.atol, wl.rtol)
        assert not zero["passed"], f"output {k}: zeros pass"
        assert zero["n_bad"] >= MIN_FRACTION_ZERO_FAILS * y.size, (
            f"output {k}: zeros fail on only {zero['n_bad']} of {y.size} elements"
        )
        nonzero = np.abs(y[y != 0])
        large = float(np.mean(nonzero > threshold)) if nonzero.size else 0.0
        assert large >= MIN_FRACTION_LARGE, f"output {k}: only {large:.1%} of the nonzero elements exceed {threshold:g}"


def test_noop_candidates_fail(wid):
    wl, small = _audit(wid)
    inputs, ref = _case(wid, KEY_A)
    _, other = _case(wid, KEY_B)
    if _output_independent(wl):
        # The documented degeneracy: the output does not depend on the inputs at all.
        assert _passes(wl, wid, KEY_A, other)
        return
    leaves = _leaves(ref)
    for k, y in enumerate(leaves):
        assert not _leaf_passes(wl, wid, KEY_A, k, np.zeros_like(y)), f"output {k}: zeros pass"
        if y.size > 1:
            const = np.full_like(y, y.mean())
            # An output that is one value in every element (within the tolerance) is allowed
            # only as a documented degeneracy, and that value must still change with the
            # inputs (the other-key check below).
            assert wl.degenerate or not _leaf_passes(wl, wid, KEY_A, k, const), (
                f"output {k}: the constant {y.mean():g} passes"
            )
        for name, x in zip(wl.input_names, inputs):
            if x.shape == y.shape:
                assert not _leaf_passes(wl, wid, KEY_A, k, np.asarray(x, np.float32)), (
                    f"output {k}: input {name} passed through passes"
                )
    assert not _passes(wl, wid, KEY_A, other), "the reference for another key passes"


def test_each_input_matters_or_is_declared_insensitive(wid):
    wl, small = _audit(wid)
    a, ref = _case(wid, KEY_A)
    b, _ = _case(wid, KEY_B)
    problems = []
    for i, name in enumerate(wl.input_names):
        same = np.array_equal(np.asarray(a[i]), np.asarray(b[i]))
        if _is_int(a[i]) and (same or name in wl.insensitive_inputs):
            continue  # an index input with a fixed value, or one declared skippable
        if same and name in wl.insensitive_inputs:
            continue  # a fixed value the documented degeneracy depends on
        if same:
            problems.append(f"{name}: identical for two keys, so re-drawing tests nothing")
            continue
        mixed = list(a)
        mixed[i] = b[i]
        out = jax.block_until_ready(_fn(wid)(*mixed))
        unchanged = _passes(wl, wid, KEY_A, out)
        if name in wl.insensitive_inputs and not unchanged:
            problems.append(f"{name}: declared insensitive, but the output changes")
        elif name not in wl.insensitive_inputs and unchanged:
            problems.append(f"{name}: re-drawn, yet the output still passes")
    assert not problems, problems


def _bf16_producers(jaxpr, found):
    from jax.extend import core as jcore

    for eqn in jaxpr.eqns:
        found.extend(eqn.primitive.name for v in eqn.outvars if getattr(v.aval, "dtype", None) == jax.numpy.bfloat16)
        for p in eqn.params.values():
            for sub in p if isinstance(p, (tuple, list)) else (p,):
                if isinstance(sub, jcore.ClosedJaxpr):
                    _bf16_producers(sub.jaxpr, found)
                elif isinstance(sub, jcore.Jaxpr):
                    _bf16_producers(sub, found)
    return found


def test_exact_answer_rounds_nothing_to_bf16(wid):
    """Correctness is judged against ``Workload.exact``: no operation inside it may produce a
    bf16 value (every reference is dtype-generic), and its outputs are float32."""
    wl, small = _audit(wid)
    specs = wl.input_specs(small)
    closed = jax.make_jaxpr(wl.exact(small))(*specs)
    assert _bf16_producers(closed.jaxpr, []) == []
    for out in jax.tree_util.tree_leaves(jax.eval_shape(wl.exact(small), *specs)):
        if jax.numpy.issubdtype(out.dtype, jax.numpy.floating):
            assert out.dtype == jax.numpy.float32


def test_xla_output_is_within_its_own_allowance(wid):
    """XLA's own output always passes (its error is the allowance), and it is no farther from
    the exact answer than the tolerance plus that error (a sanity check of the rule)."""
    wl, small = _audit(wid)
    _, ref = _case(wid, KEY_A)
    assert _passes(wl, wid, KEY_A, ref)
