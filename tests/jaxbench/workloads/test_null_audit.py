"""The null-kernel audit's data (jaxbench/workloads/null_audit.json, made by
benchmarks/null_audit.py): present for every level-1 workload and computed for its current
content hash (a version bump fails here until the generator runs again); every null kernel fails
our rule except where a documented degeneracy says why not; the public side names the recorded
commit and says what it ran or why not; and our side, recomputed here for a few cheap
workloads, is what the file holds."""

import math

import pytest

from jaxbench import workloads
from jaxbench.workloads import null_audit

DATA = null_audit.load()
LEVEL_ONE = [w for w in workloads.all_workloads() if w.level == 1]
IDS = [w.id for w in LEVEL_ONE]
# cheap at the small profile (a second or two each): recomputed and compared with the file
RECOMPUTED = ["12p", "13p", "25k", "38k", "46k"]
REGENERATE = "run `.venv/bin/python benchmarks/null_audit.py --only {wid}` and commit null_audit.json"


def test_the_file_covers_every_level_one_workload():
    assert DATA, f"{null_audit.DATA_FILE} is missing: run benchmarks/null_audit.py"
    assert list(DATA["workloads"]) == IDS


@pytest.mark.parametrize("wid", IDS)
def test_entry_is_for_the_current_definition(wid):
    wl = workloads.get(wid)
    e = DATA["workloads"][wid]
    assert e["content_hash"] == wl.content_hash, (
        f"{wid}: audited for {e['content_hash']}, now {wl.content_hash}: " + REGENERATE.format(wid=wid)
    )
    assert null_audit.entry(wl)["current"] is True


@pytest.mark.parametrize("wid", IDS)
def test_every_null_kernel_fails_our_rule_unless_documented(wid):
    wl = workloads.get(wid)
    ours = DATA["workloads"][wid]["ours"]
    assert ours["profile"] == "small"
    kernels = ours["kernels"]
    assert list(kernels) == null_audit.kernel_names(wl.input_names)
    for name, r in kernels.items():
        if not r.get("applicable", True):
            assert r["reason"], name
            continue
        assert r["size"] > 0 and 0 <= r["n_fail"] <= r["size"] and r["excess"] >= 0
        assert r["passes"] == (r["n_fail"] == 0), name
        if r["passes"]:
            # the only passes: a documented degeneracy (25k's output is mean(beta) everywhere)
            assert wl.degenerate, f"{wid}: the null kernel {name} passes our rule"
        else:
            assert r["excess"] > 1, name
    assert kernels["zeros"]["passes"] is False and kernels["constant"]["passes"] is False


def test_the_passes_on_our_side_are_exactly_the_documented_ones():
    passing = {wid: null_audit.passing(e["ours"]) for wid, e in DATA["workloads"].items()}
    assert {wid: p for wid, p in passing.items() if p} == {"25k": ["mean"]}


@pytest.mark.parametrize("wid", IDS)
def test_public_side_names_the_recorded_commit_and_what_ran(wid):
    wl = workloads.get(wid)
    pub = DATA["workloads"][wid]["public"]
    assert pub["commit"] == wl.upstream.commit and pub["file"] == wl.upstream.file
    assert pub["status"] in ("run", "error", "not run")
    if pub["status"] != "run":
        assert pub["reason"].strip(), wid
        return
    assert pub["sizes"] in ("full", "small") and (pub["atol"], pub["rtol"]) == (1e-2, 1e-2)
    assert len(pub["shapes"]) >= len(wl.input_names)
    assert list(pub["kernels"]) == null_audit.kernel_names(wl.input_names)
    for name, r in null_audit.applicable(pub["kernels"]).items():
        assert isinstance(r["passes"], bool) and r["max_diff"] >= 0, name
        assert r["passes"] == (r["excess"] <= 1), (name, r)  # allclose's own bound, recomputed


def test_the_public_file_that_fails_in_its_own_harness_is_recorded_so():
    pub = DATA["workloads"]["11p"]["public"]
    assert pub["status"] == "error" and "fails in its own harness" in pub["reason"]
    assert workloads.get("11p").public_file_note


def _close(a, b, rel=1e-2):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-6)


@pytest.mark.parametrize("wid", RECOMPUTED)
def test_our_side_recomputed_equals_the_file(wid):
    stored = DATA["workloads"][wid]["ours"]
    fresh = null_audit.ours(workloads.get(wid))
    assert fresh.keys() == stored.keys() and fresh["kernels"].keys() == stored["kernels"].keys()
    for name, r in fresh["kernels"].items():
        s = stored["kernels"][name]
        if not r.get("applicable", True):
            assert r == s
            continue
        assert r["passes"] == s["passes"] and r["size"] == s["size"], (wid, name)
        assert abs(r["n_fail"] - s["n_fail"]) <= 0.01 * r["size"], (wid, name, r, s)
        assert _close(r["excess"], s["excess"]), (wid, name, r, s)
        for a, b in zip(r.get("value", []), s.get("value", []), strict=True):
            assert _close(a, b), (wid, name, r, s)


def test_summary_lines():
    assert null_audit.summary_line(DATA["workloads"]["12p"]["ours"]) == "all 4 fail"
    assert null_audit.summary_line(DATA["workloads"]["25k"]["ours"]) == "mean passes"
    assert null_audit.summary_line(DATA["workloads"]["11p"]["public"]) == "not run"
    assert null_audit.summary_line(None) == "not run"
    assert null_audit.passing(DATA["workloads"]["6p"]["public"])[0] == "zeros"
