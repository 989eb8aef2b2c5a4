"""Upstream tracking (jaxbench/workloads/upstream.py): every level-1 workload names the public
file it matches at a full commit, and lists its deliberate deviations with reasons; the list
cannot drift from the facts it summarises (tolerance overrides, degeneracy, the public-file
note). With ``JAXBENCH_PUBLIC_SUITE_MIRROR`` set to a git copy of the public repository, each
recorded commit is checked there too."""

import ast
import os
import pathlib
import subprocess

import pytest

from jaxbench import environment, workloads
from jaxbench.workloads import upstream
from jaxbench.workloads.base import DEFAULT_ATOL, DEFAULT_RTOL
from jaxbench.workloads.upstream import DEVIATION_KINDS, Deviation, Upstream
from jaxbench.workloads.upstream_git import GitError, Mirror, Suite

MIRROR_ENV = "JAXBENCH_PUBLIC_SUITE_MIRROR"
LEVEL_ONE = [w for w in workloads.all_workloads() if w.level == 1]
IDS = [w.id for w in LEVEL_ONE]
MODULES = pathlib.Path(workloads.__file__).parent


def _sci(x: float) -> str:
    """1e-4 and 6e-2, as the deviations write them."""
    return f"{x:.0e}".replace("e-0", "e-")


def _kinds(wl, kind):
    return [d for d in wl.deviations if d.kind == kind]


@pytest.mark.parametrize("wid", IDS)
def test_upstream_file_matches_the_public_name(wid):
    wl = workloads.get(wid)
    up = wl.upstream
    assert isinstance(up, Upstream), f"{wid}: no upstream declared"
    assert up.file == f"JAXBench/benchmark/{wl.public_name}/baseline.py" == upstream.suite_file(wl.public_name)
    assert len(up.commit) == 40 and all(c in "0123456789abcdef" for c in up.commit)
    assert up.url == f"https://github.com/AI-Hypercomputer/accelerator-agents/blob/{up.commit}/{up.file}"


@pytest.mark.parametrize("wid", IDS)
def test_deviations_have_kinds_and_reasons(wid):
    wl = workloads.get(wid)
    assert isinstance(wl.deviations, tuple)
    for d in wl.deviations:
        assert d.kind in DEVIATION_KINDS
        assert len(d.what.strip()) > 10 and len(d.why.strip()) > 10, d


@pytest.mark.parametrize("wid", IDS)
def test_each_fact_has_its_deviation(wid):
    """A tolerance override, a degeneracy and a public-file note each have exactly one deviation
    of their kind whose reason is that very text; no such deviation without the fact."""
    wl = workloads.get(wid)
    overridden = (wl.atol, wl.rtol) != (DEFAULT_ATOL, DEFAULT_RTOL)
    tol = _kinds(wl, "tolerance")
    assert len(tol) == overridden, f"{wid}: tolerance override {overridden}, deviations {tol}"
    if overridden:
        assert tol[0].why == wl.tolerance_reason
        assert f"atol {_sci(wl.atol)}" in tol[0].what and f"rtol {_sci(wl.rtol)}" in tol[0].what, tol[0].what
    for kind, fact in (("degenerate", wl.degenerate), ("public-file", wl.public_file_note)):
        found = _kinds(wl, kind)
        assert len(found) == bool(fact), f"{wid}: {kind} is {fact!r}, deviations {found}"
        if fact:
            assert found[0].why == fact


def test_every_module_declares_both_explicitly():
    """Adding a workload stays one module, and a module with no deviation says so: `deviations=()`."""
    missing = []
    for wl in LEVEL_ONE:
        path = next(MODULES.glob(f"w{wl.number:02d}{wl.id[-1]}_*.py"))
        call = next(
            n.value
            for n in ast.parse(path.read_text()).body
            if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "WORKLOAD"
        )
        given = {k.arg for k in call.keywords}
        missing += [f"{path.name}: {arg}=" for arg in ("upstream", "deviations") if arg not in given]
    assert missing == []


def test_summary_and_kinds():
    wl = workloads.get("38k")
    s = wl.summary()
    assert s["upstream"]["commit"] == wl.upstream.commit and s["upstream"]["url"].endswith("/baseline.py")
    assert [d["kind"] for d in s["deviations"]] == ["tolerance", "inputs"]
    assert workloads.get("12p").summary()["deviations"] == []
    # the four facts of the issue: tolerances, the degenerate workloads, the broken public file,
    # the serving scenario's sizes
    by_kind = {k: {w.id for w in LEVEL_ONE if _kinds(w, k)} for k in DEVIATION_KINDS}
    assert by_kind["tolerance"] == {"38k", "43k", "50k"}
    assert by_kind["degenerate"] == {"23k", "25k", "26k", "36k"}
    assert by_kind["public-file"] == {"11p"}
    assert "7p" in by_kind["small-profile"]


def test_the_dataclasses_refuse_bad_values():
    good = dict(file="JAXBench/benchmark/12p_RMSNorm/baseline.py", commit="a" * 40, date="2026-05-05")
    Upstream(**good)
    for bad in ({"commit": "abc1234"}, {"commit": "A" * 40}, {"file": "benchmark/x.py"}, {"date": "May 5"}):
        with pytest.raises(ValueError):
            Upstream(**{**good, **bad})
    with pytest.raises(ValueError):
        Deviation("inputs", "what", " ")
    with pytest.raises(ValueError):
        Deviation("taste", "what", "why")
    with pytest.raises(TypeError):
        upstream.check_deviations([Deviation("inputs", "what", "why")])


# --------------------------------------------------------------------------------------------
# Reading a git copy: a small repository made here, and the real mirror when it is given.


def _git(repo, *args):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_DATE": "2026-05-05T12:00:00+00:00",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def _history(tmp_path):
    """A repository with one public file changed twice, and an unrelated commit between."""
    repo = tmp_path / "repo"
    f = "JAXBench/benchmark/12p_RMSNorm/baseline.py"
    (repo / "JAXBench/benchmark/12p_RMSNorm").mkdir(parents=True)
    _git(repo.parent, "init", "-q", str(repo))
    (repo / f).write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    first = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("other\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "unrelated")
    (repo / f).write_text("x = 2\ny = 3\n")
    _git(repo, "commit", "-q", "-am", "second")
    second = _git(repo, "rev-parse", "HEAD").strip()
    return repo, f, first, second


def test_mirror_reads_history(tmp_path):
    repo, f, first, second = _history(tmp_path)
    m = Mirror(repo)  # a work tree: its .git is read
    assert m.last_commit(f) == second and m.commits(f) == [second, first]
    assert m.touches(first, f) and m.touches(second, f) and not m.touches(m.commits("README.md")[0], f)
    assert m.has_commit(first) and not m.has_commit("0" * 40)
    assert m.show(first, f) == "x = 1\n" and m.date(first) == "2026-05-05"
    assert m.count_between(first, second, f) == 1
    assert "1 file changed" in m.diff_stat(first, second, f)
    assert Suite(repo).read(f) == "x = 2\ny = 3\n" and Suite(repo / "JAXBench").read(f) == "x = 2\ny = 3\n"
    with pytest.raises(GitError):
        Mirror(tmp_path)


def _mirror():
    path = environment.get(MIRROR_ENV)
    if not path:
        pytest.skip(f"no public repository copy: set {MIRROR_ENV} to a git copy of {upstream.REPOSITORY}")
    return Mirror(path)


@pytest.mark.parametrize("wid", IDS)
def test_recorded_commit_exists_and_touches_the_file(wid):
    m = _mirror()
    up = workloads.get(wid).upstream
    assert m.has_commit(up.commit), f"{wid}: commit {up.commit} is not in the copy"
    assert m.touches(up.commit, up.file), f"{wid}: {up.commit[:7]} does not change {up.file}"
    assert m.date(up.commit) == up.date


def test_the_drift_script_reports_a_changed_file(tmp_path, monkeypatch, capsys):
    import dataclasses
    import importlib.util

    repo, f, first, second = _history(tmp_path)
    spec = importlib.util.spec_from_file_location(
        "upstream_drift", pathlib.Path(__file__).parents[3] / "benchmarks" / "upstream_drift.py"
    )
    drift = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drift)
    old = dataclasses.replace(workloads.get("12p"), upstream=Upstream(file=f, commit=first, date="2026-05-05"))
    same = dataclasses.replace(workloads.get("8p"), upstream=Upstream(file=f, commit=second, date="2026-05-05"))
    monkeypatch.setattr(workloads, "all_workloads", lambda: [old, same])
    monkeypatch.setattr("sys.argv", ["upstream_drift.py", "--mirror", str(repo)])
    assert drift.main() == 0
    out = capsys.readouterr().out
    assert f"12p      {first[:7]}   {second[:7]}   changed        1" in out
    assert "newest: 2026-05-05 second" in out and "1 file changed, 2 insertions(+), 1 deletion(-)" in out
    assert f"8p       {second[:7]}   {second[:7]}   same" in out
    assert "changed: 1 (12p)" in out and "same: 1" in out and "Upstream tracking" in out


def test_a_level_two_twin_says_run_here_only_where_the_script_runs_its_file():
    """RUN_CLAMPED is a claim benchmarks/level2_public.py backs: every twin that makes it has its
    small-profile blocks there (and a small-profile deviation saying so) and runs on the cpu
    target; RUN_CLAMPED_ON_TPU is the same claim for a TPU-only twin, whose file
    benchmarks/tpu_harness.py --public-suite runs on the chip."""
    from benchmarks.level2_public import SMALL_TUNED, candidate_source

    def claiming(sentence):
        return {w.id for w in workloads.of_level(2) if w.upstream.conformance == sentence}

    clamped = {wid for wid, blocks in SMALL_TUNED.items() if blocks is not None}
    assert claiming(upstream.RUN_CLAMPED) == {wid for wid in clamped if "cpu" in workloads.get(wid).platforms}
    assert claiming(upstream.RUN_CLAMPED_ON_TPU) == {
        wid for wid in clamped if "cpu" not in workloads.get(wid).platforms
    }
    assert claiming(upstream.RUN_CLAMPED_ON_TPU) == {"l2-7p"}
    for wid in clamped:
        assert _kinds(workloads.get(wid), "small-profile"), wid
    src = candidate_source(
        "TUNED_PARAMS = {'tiling': [256, 1024, 1024]}\n\ndef workload(x):\n    return x\n", {"tiling": [1, 2]}
    )
    ns: dict = {}
    exec(compile(src, "candidate.py", "exec"), ns)  # the file's own lines unchanged, one appended
    assert src.startswith("TUNED_PARAMS = {'tiling': [256, 1024, 1024]}\n") and ns["TUNED_PARAMS"] == {"tiling": [1, 2]}
    assert candidate_source("def workload(x):\n    return x\n", None) == "def workload(x):\n    return x\n"
    with pytest.raises(ValueError, match="no longer has TUNED_PARAMS"):
        candidate_source("def workload(x):\n    return x\n", {"tiling": [1, 2]})
