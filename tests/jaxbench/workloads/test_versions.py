"""Every workload has a version; its definition cannot change without the bump."""

import dataclasses

import pytest

from jaxbench import workloads as registry
from jaxbench.workloads import versions
from jaxbench.workloads import w08p_gemm as gemm


@pytest.mark.parametrize("wid", registry.ids())
def test_hash_matches_recorded_version(wid):
    wl = registry.get(wid)
    problem = versions.check(wl)
    assert problem is None, problem


def test_every_workload_starts_at_version_1_with_a_distinct_hash():
    wls = registry.all_workloads()
    assert {w.version for w in wls} == {1}
    assert len({w.content_hash for w in wls}) == len(wls)
    assert set(versions.RECORDED) == {w.id for w in wls}
    assert wls[0].summary()["version"] == 1 and wls[0].summary()["content_hash"] == wls[0].content_hash


def _gemm_with(**changes):
    return dataclasses.replace(gemm.WORKLOAD, **changes)


def _reference_scaled(a, b):
    return jnp_dot(a, b) * 2


def jnp_dot(a, b):
    return a @ b


@pytest.mark.parametrize(
    "change",
    [
        {"profiles": {"full": {"M": 8192, "K": 8192, "N": 28672}, "small": {"M": 512, "K": 512, "N": 1024}}},
        {"atol": 2e-2, "tolerance_reason": "test"},
        {"reference": _reference_scaled},
        {"create_inputs_fn": lambda cfg, key: gemm.create_inputs(cfg, key)[::-1]},
    ],
    ids=["profile", "tolerance", "reference", "inputs"],
)
def test_a_change_without_bump_fails_naming_the_workload(change):
    changed = _gemm_with(**change)
    assert changed.content_hash != gemm.WORKLOAD.content_hash
    problem = versions.check(changed)
    assert problem is not None
    assert problem.startswith("workload 8p: its definition changed")
    assert "version=2" in problem and "w08p_gemm.py" in problem and changed.content_hash in problem


def test_the_bump_alone_is_not_enough_until_recorded(monkeypatch):
    changed = _gemm_with(atol=2e-2, tolerance_reason="test", version=2)
    assert "versions.py records (1," in versions.check(changed)
    monkeypatch.setitem(versions.RECORDED, "8p", (2, changed.content_hash))
    assert versions.check(changed) is None
    # ... and the old definition now disagrees with the record
    assert versions.check(gemm.WORKLOAD) is not None


def test_helpers_called_by_the_recipe_are_part_of_the_hash(monkeypatch):
    from jaxbench.workloads import _inputs
    from jaxbench.workloads import w42k_gemm_max_subtract_gelu as w42

    parts = versions.content_parts(w42.WORKLOAD)
    assert any("def normal_bf16" in s for s in parts["inputs"])

    def normal_bf16(key, shape, scale=1.0, shift=0.5):
        return _inputs.normal_bf16(key, shape, scale, shift)

    monkeypatch.setitem(w42.create_inputs.__globals__, "normal_bf16", normal_bf16)
    assert versions.content_hash(w42.WORKLOAD) != versions.RECORDED["42k"][1]


def _load(tmp_path, name, text):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def test_comments_docstrings_and_layout_do_not_count(tmp_path):
    a = _load(tmp_path, "va", 'def f(x):\n    """doc"""\n    # comment\n    return (x  +  1)\n')
    b = _load(tmp_path, "vb", "def f(x):\n\n    return x + 1  # another\n")
    c = _load(tmp_path, "vc", "def f(x):\n    return x + 2\n")
    assert versions._normalised_source(a) == versions._normalised_source(b)
    assert versions._normalised_source(a) != versions._normalised_source(c)
    assert versions._normalised_source(gemm.reference) == "def reference(a, b):\n    return jnp.dot(a, b)"
