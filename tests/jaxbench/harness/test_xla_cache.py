"""The trusted side's persistent XLA compilation cache (jaxbench/harness/xla_cache.py): where it
lives, when it stays off, that a second process loads what the first compiled, and that a
candidate's children never get one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from jaxbench.harness import xla_cache


class _Config:
    def __init__(self):
        self.values = {}

    def update(self, name, value):
        self.values[name] = value


class _Jax:
    def __init__(self):
        self.config = _Config()


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """enable() as in a new process, the cache root under tmp_path."""
    monkeypatch.setattr(xla_cache, "_STATE", {})
    monkeypatch.setenv("JAXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("JAXBENCH_XLA_CACHE_MB", raising=False)
    return tmp_path / "cache" / "xla"


def test_on_by_default_in_a_private_directory_with_a_bounded_size(fresh):
    jax = _Jax()
    assert xla_cache.enable(jax) == str(fresh)
    assert (os.stat(fresh).st_mode & 0o777) == 0o700
    got = jax.config.values
    assert got["jax_compilation_cache_dir"] == str(fresh)
    # a bounded size: JAX then evicts the least recently used and takes its file lock
    assert got["jax_compilation_cache_max_size"] == 512 << 20
    assert got["jax_persistent_cache_min_compile_time_secs"] == xla_cache.MIN_COMPILE_S
    # once per process: a second call changes nothing and says the same
    again = _Jax()
    assert xla_cache.enable(again) == str(fresh) and again.config.values == {}


def test_size_zero_turns_it_off(fresh, monkeypatch):
    monkeypatch.setenv("JAXBENCH_XLA_CACHE_MB", "0")
    jax = _Jax()
    assert xla_cache.enable(jax) is None and jax.config.values == {} and not fresh.exists()


def test_a_directory_open_to_others_or_a_link_is_not_used(fresh, tmp_path, capsys):
    fresh.parent.mkdir(parents=True)
    fresh.mkdir(mode=0o700)
    os.chmod(fresh, 0o777)  # anyone could plant an executable the trusted side would load
    jax = _Jax()
    assert xla_cache.enable(jax) is None and jax.config.values == {}
    assert "closed to others" in capsys.readouterr().err
    os.rmdir(fresh)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    fresh.symlink_to(tmp_path / "elsewhere")
    xla_cache._STATE.clear()
    assert xla_cache.enable(_Jax()) is None


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    """The trusted side's own programs (a workload's inputs and reference, compiled through
    prepare.trusted_jax) are read back from disk by the next process: JAX counts a cache hit."""
    script = textwrap.dedent(
        """
        import json, sys
        import jax
        from jax import monitoring
        from jaxbench import workloads
        from jaxbench.harness import prepare

        hits = []
        monitoring.register_event_listener(lambda name, **kw: hits.append(name))
        jax = prepare.trusted_jax()
        wl = workloads.get("12p")
        create, ref, _ = prepare._fns(wl, "small")
        xs = jax.block_until_ready(create(jax.random.key(1)))
        jax.block_until_ready(ref(*xs))
        print(json.dumps({"hits": sum(n == "/jax/compilation_cache/cache_hits" for n in hits)}))
        """
    )
    env = {**os.environ, "JAXBENCH_CACHE_DIR": str(tmp_path / "cache"), "JAX_PLATFORMS": "cpu"}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)

    def run():
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])["hits"]

    assert run() == 0
    entries = [p for p in (tmp_path / "cache" / "xla").iterdir() if p.name.endswith("-cache")]
    assert entries, "nothing was written"
    assert run() >= 1
