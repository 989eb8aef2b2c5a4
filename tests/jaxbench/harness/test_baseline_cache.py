"""The command line's disk cache of the baseline timed alone (jaxbench/harness/baseline_cache.py):
what makes a stored record a hit, what makes it a miss (never an error), how it is written, the
layers of ``api._cached_baseline``, and two real ``python -m jaxbench evaluate`` runs."""

import dataclasses
import inspect
import io
import json
import os
import stat
import subprocess
import sys
import time

import pytest

from jaxbench import cli, harness, workloads
from jaxbench.harness import api
from jaxbench.harness import baseline_cache as bc
from tests.jaxbench.fake_baseline import fake_measure_baseline

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(REPO, "jaxbench", "kernels", "examples", "12p-rmsnorm.py")


@pytest.fixture(autouse=True)
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("JAXBENCH_BASELINE_CACHE_DAYS", raising=False)
    return tmp_path / "cache" / "baselines"


@pytest.fixture(scope="module")
def wl():
    return workloads.get("12p")


def _record(key, **over):
    rec = {
        "kind": "baseline",
        "workload": key["workload"],
        "profile": key["profile"],
        "hardware": "cpu",
        "harness_version": key["harness_version"],
        "median_s": 0.004,
        "timing": {"median_s": 0.004, "n": 50},
        "measured_at": time.time() - 60,
    }
    rec.update(over)
    return rec


def _other_reference(x, scale):
    return x * scale


# -- the key ---------------------------------------------------------------------------------------


def test_the_key_names_what_the_figure_depends_on(wl, monkeypatch):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    assert key["workload"] == "12p" and key["workload_version"] == wl.version and key["profile"] == "small"
    assert key["hardware"] == "cpu" and key["harness_version"] == harness.HARNESS_VERSION
    assert key["host"]["hostname"] and key["host"]["cpu_model"] and key["timer_cores"] >= 1
    assert key["jax_version"] != "unknown" and key["jaxlib_version"] != "unknown"
    assert bc.key_for(wl, "small", "cpu", "cpu") == key  # stable
    json.dumps(key)

    changed = {
        "profile": bc.key_for(wl, "full", "cpu", "cpu"),
        "hardware": bc.key_for(wl, "small", "detected:cpu", "cpu"),
        "version": bc.key_for(dataclasses.replace(wl, version=wl.version + 1), "small", "cpu", "cpu"),
        "reference": bc.key_for(dataclasses.replace(wl, reference=_other_reference), "small", "cpu", "cpu"),
        "workload": bc.key_for(workloads.get("8p"), "small", "cpu", "cpu"),
    }
    real_version = bc._version
    monkeypatch.setattr(bc, "_version", lambda dist: "0.0.1" if dist == "jax" else real_version(dist))
    changed["jax"] = bc.key_for(wl, "small", "cpu", "cpu")
    monkeypatch.setattr(bc, "_version", lambda dist: "0.0.1" if dist == "jaxlib" else real_version(dist))
    changed["jaxlib"] = bc.key_for(wl, "small", "cpu", "cpu")
    monkeypatch.setattr(bc, "_version", real_version)
    monkeypatch.setattr(bc, "HARNESS_VERSION", "0.0.0")
    changed["harness"] = bc.key_for(wl, "small", "cpu", "cpu")
    monkeypatch.setattr(bc, "HARNESS_VERSION", harness.HARNESS_VERSION)
    monkeypatch.setattr(bc, "host_identity", lambda: {"hostname": "elsewhere", "cpu_model": "x"})
    changed["host"] = bc.key_for(wl, "small", "cpu", "cpu")
    for what, other in changed.items():
        assert other != key, what
        assert bc.path_for(other) != bc.path_for(key), what


def test_every_change_of_key_misses(wl):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    assert bc.store(key, _record(key))
    assert bc.load(key)["median_s"] == 0.004
    variants = {
        "workload_version": key["workload_version"] + 1,
        "reference_sha256": "0" * 64,
        "profile": "full",
        "hardware": "tpu-v6e",
        "host": {"hostname": "elsewhere", "cpu_model": key["host"]["cpu_model"]},
        "timer_cores": key["timer_cores"] + 1,
        "timing": "wall",
        "jax_version": "0.0.1",
        "jaxlib_version": "0.0.1",
        "harness_version": "0.0.0",
    }
    for field, value in variants.items():
        assert bc.load({**key, field: value}) is None, field


# -- misses, never errors --------------------------------------------------------------------------


def _write(key, payload: bytes):
    path = bc.path_for(key)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "wb") as f:
        f.write(payload)
    os.chmod(path, 0o600)
    return path


def _doc(key, rec=None, stored_key=None):
    return json.dumps({"key": stored_key or key, "stored_at": time.time(), "record": rec or _record(key)}).encode()


def test_bad_files_are_misses(wl):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    assert bc.load(key) is None  # missing
    good = _doc(key)
    bad = {
        "garbage": b"\x00\xff not json",
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "not an object": b"[1, 2, 3]",
        "deep": b"[" * 100000 + b"]" * 100000,
        "oversized": good[:-1] + b', "pad": "' + b"x" * (bc.MAX_BYTES + 10) + b'"}',
        "other key": _doc(key, stored_key={**key, "jax_version": "0.0.1"}),
        "no key": json.dumps({"record": _record(key)}).encode(),
        "not a baseline": _doc(key, _record(key, kind="evaluation")),
        "no median": _doc(key, _record(key, median_s=None)),
        "zero median": _doc(key, _record(key, median_s=0)),
        "negative median": _doc(key, _record(key, median_s=-1.0)),
        "bool median": _doc(key, _record(key, median_s=True)),
        "infinite median": json.dumps({"key": key, "record": _record(key, median_s=float("inf"))}).encode(),
        "nan median": json.dumps({"key": key, "record": _record(key, median_s=float("nan"))}).encode(),
        "another workload": _doc(key, _record(key, workload="8p")),
        "expired": _doc(key, _record(key, measured_at=time.time() - 8 * 86400)),
        "from the future": _doc(key, _record(key, measured_at=time.time() + 86400)),
        "no time": _doc(key, _record(key, measured_at=None)),
        "record not a dict": json.dumps({"key": key, "record": [1]}).encode(),
    }
    for what, payload in bad.items():
        _write(key, payload)
        assert bc.load(key) is None, what
    _write(key, good)
    assert bc.load(key) is not None


def test_a_file_others_could_have_written_is_a_miss(wl, tmp_path):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    path = _write(key, _doc(key))
    assert bc.load(key) is not None
    os.chmod(path, 0o666)
    assert bc.load(key) is None
    os.unlink(path)
    target = tmp_path / "elsewhere.json"
    target.write_bytes(_doc(key))
    os.chmod(target, 0o600)
    os.symlink(target, path)
    assert bc.load(key) is None


def test_age_limit_and_off_switch(wl, monkeypatch):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    bc.store(key, _record(key, measured_at=time.time() - 2 * 86400))
    assert bc.load(key) is not None
    monkeypatch.setenv("JAXBENCH_BASELINE_CACHE_DAYS", "1")
    assert bc.load(key) is None
    monkeypatch.setenv("JAXBENCH_BASELINE_CACHE_DAYS", "0")
    assert not bc.enabled() and bc.load(key) is None
    assert bc.store(key, _record(key)) is None  # off: nothing written either


# -- writing ---------------------------------------------------------------------------------------


def test_store_is_atomic_and_private(wl, cache_env):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    path = bc.store(key, _record(key, median_s=0.001))
    path2 = bc.store(key, _record(key, median_s=0.002))  # replaces it
    assert path == path2 == bc.path_for(key)
    assert os.listdir(cache_env) == [os.path.basename(path)]  # no temporary file left
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cache_env).st_mode) == 0o700
    assert bc.load(key)["median_s"] == 0.002
    assert json.loads(open(path).read())["key"] == key


def test_a_failed_write_leaves_nothing_and_does_not_raise(wl, cache_env, capsys, monkeypatch):
    key = bc.key_for(wl, "small", "cpu", "cpu")
    os.makedirs(cache_env, mode=0o700)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bc.os, "replace", fail)
    assert bc.store(key, _record(key)) is None
    assert os.listdir(cache_env) == []
    assert "was not cached" in capsys.readouterr().err


def test_an_unwritable_directory_does_not_raise(wl, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # even root cannot make a directory under a regular file
    monkeypatch.setenv("JAXBENCH_CACHE_DIR", str(blocker / "cache"))
    key = bc.key_for(wl, "small", "cpu", "cpu")
    assert bc.store(key, _record(key)) is None
    assert "was not cached" in capsys.readouterr().err
    assert bc.load(key) is None
    # nor does a record that is not JSON
    monkeypatch.setenv("JAXBENCH_CACHE_DIR", str(tmp_path / "ok"))
    assert bc.store(key, _record(key, median_s=float("nan"))) is None


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("JAXBENCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert bc.cache_dir() == str(tmp_path / "xdg" / "jaxbench" / "baselines")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert bc.cache_dir() == str(tmp_path / "home" / ".cache" / "jaxbench" / "baselines")


# -- the layers of _cached_baseline ----------------------------------------------------------------


@pytest.fixture
def fake_measure(monkeypatch):
    return fake_measure_baseline(monkeypatch)


def test_memory_only_never_touches_the_disk(wl, fake_measure, cache_env):
    a = api._cached_baseline(wl, "small", "cpu", "cpu")
    b = api._cached_baseline(wl, "small", "cpu", "cpu")
    assert (a["cache"], b["cache"], len(fake_measure)) == ("measured", "memory", 1)
    assert not cache_env.exists()
    # the worker's path: evaluate, its warm pool and evaluate_case default to memory only
    for fn in (harness.evaluate, api.evaluate_case):
        assert inspect.signature(fn).parameters["baseline_cache"].default == "memory"
    assert "baseline_cache" not in inspect.signature(harness.WarmPool.evaluate).parameters


def test_disk_layer_then_memory_then_fresh(wl, fake_measure, cache_env, monkeypatch):
    first = api._cached_baseline(wl, "small", "cpu", "cpu", "disk")
    assert first["cache"] == "measured" and len(fake_measure) == 1 and len(os.listdir(cache_env)) == 1
    assert "cache" not in bc.load(bc.key_for(wl, "small", "cpu", "cpu"))  # the origin is not stored
    monkeypatch.setattr(api, "_BASELINES", {})  # a new process
    again = api._cached_baseline(wl, "small", "cpu", "cpu", "disk")
    assert again["cache"] == "disk" and again["median_s"] == first["median_s"] and len(fake_measure) == 1
    assert api._cached_baseline(wl, "small", "cpu", "cpu", "disk")["cache"] == "memory"
    fresh = api._cached_baseline(wl, "small", "cpu", "cpu", "fresh")
    assert fresh["cache"] == "measured" and len(fake_measure) == 2 and fresh["median_s"] != first["median_s"]
    monkeypatch.setattr(api, "_BASELINES", {})
    assert api._cached_baseline(wl, "small", "cpu", "cpu", "disk")["median_s"] == fresh["median_s"]
    # a detected target is its own entry
    assert api._cached_baseline(wl, "small", None, "cpu", "disk")["cache"] == "measured"
    with pytest.raises(ValueError):
        api._cached_baseline(wl, "small", "cpu", "cpu", "sometimes")


def test_a_read_only_cache_still_evaluates(wl, fake_measure, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("JAXBENCH_CACHE_DIR", str(blocker / "cache"))
    assert api._cached_baseline(wl, "small", "cpu", "cpu", "disk")["cache"] == "measured"
    assert "was not cached" in capsys.readouterr().err


# -- the command line ------------------------------------------------------------------------------


def test_cli_flag_and_line():
    args = cli.build_parser().parse_args(["evaluate", "--workload", "12p", "--kernel", "k.py", "--fresh-baseline"])
    assert args.fresh_baseline is True
    assert cli.build_parser().parse_args(["evaluate", "--workload", "12p", "--kernel", "k.py"]).fresh_baseline is False
    rec = {
        "workload_slug": "12p-rmsnorm",
        "profile": "small",
        "hardware": "cpu",
        "mode": "interpret",
        "outcome": "correct_tie",
        "error_category": None,
        "baseline_median_s": 0.004,
        "cached_baseline_median_s": 0.0039,
        "cached_baseline_from": "disk",
        "cached_baseline_measured_at": 1000.0,
    }
    out = io.StringIO()
    cli.print_record(rec, out, now=1000.0 + 3 * 3600)
    assert (
        "  (baseline alone from the disk cache, measured 3.0 h ago; --fresh-baseline re-measures)\n" in out.getvalue()
    )
    out = io.StringIO()
    cli.print_record({**rec, "cached_baseline_from": "measured"}, out)
    assert "disk cache" not in out.getvalue()


def _evaluate_cli(cache_dir, *extra):
    env = dict(os.environ, JAXBENCH_CACHE_DIR=str(cache_dir))
    env.pop("JAXBENCH_BASELINE_CACHE_DAYS", None)
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "jaxbench", "evaluate", "--workload", "12p", "--kernel", EXAMPLE]
        + ["--profile", "small", "--hardware", "cpu", "--json", *extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout), wall


@pytest.mark.slow
def test_the_second_cli_run_reuses_the_baseline_from_disk(tmp_path):
    cache = tmp_path / "cache"
    first, cold = _evaluate_cli(cache)
    assert first["cached_baseline_from"] == "measured", first["notes"]
    (stored,) = os.listdir(cache / "baselines")
    before = os.stat(cache / "baselines" / stored)
    second, warm = _evaluate_cli(cache)
    print(f"\ncold CLI run {cold:.1f} s (baseline alone measured); cached CLI run {warm:.1f} s (from disk)")
    assert second["cached_baseline_from"] == "disk"
    assert second["cached_baseline_measured_at"] == first["cached_baseline_measured_at"]
    assert second["cached_baseline_median_s"] == first["cached_baseline_median_s"]
    after = os.stat(cache / "baselines" / stored)
    # nothing measured it again: nothing stored (a measurement in "disk" mode is always stored)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert os.listdir(cache / "baselines") == [stored]
