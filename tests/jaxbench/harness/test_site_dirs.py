"""A child imports from every directory the allowed packages live in: JAX's own, then the others
on sys.path (a TPU VM's preinstalled JAX beside Tokamax installed with ``pip --target``)."""

import sys

import pytest

from jaxbench.sandbox import bwrap, host


def _site(tmp_path, name, entries):
    d = tmp_path / name
    d.mkdir()
    for e in entries:
        (d / e).mkdir()
    return d


def test_a_second_directory_joins_only_for_what_the_first_lacks(tmp_path, monkeypatch):
    jax_site = _site(tmp_path, "jax_site", ["jax", "numpy", "tqdm"])
    extra = _site(tmp_path, "extra", ["tokamax", "tqdm"])
    dup = _site(tmp_path, "dup", ["tqdm", "numpy"])
    unrelated = _site(tmp_path, "unrelated", ["django"])
    monkeypatch.setattr(host, "site_packages", lambda: str(jax_site))
    monkeypatch.setattr(sys, "path", [str(unrelated), str(dup), str(extra), str(jax_site), "", str(tmp_path / "gone")])
    got = host.site_dirs(bwrap.site_entries)
    assert got == [str(jax_site), str(extra)]


def test_the_installed_stack_is_one_directory():
    assert host.site_dirs(bwrap.site_entries) == [host.site_packages()]


@pytest.fixture
def fake_bwrap(monkeypatch):
    monkeypatch.setattr(bwrap, "bwrap_info", lambda: {"path": "/usr/bin/bwrap", "version": "0", "flags": []})


def test_bubblewrap_binds_each_entry_once_from_the_first_directory(tmp_path, fake_bwrap):
    first = _site(tmp_path, "first", ["jax", "tqdm"])
    second = _site(tmp_path, "second", ["tokamax", "tqdm"])
    argv = bwrap.bwrap_argv(
        {},
        lambda p: p,
        prefix=str(tmp_path / "prefix"),
        site=[str(first), str(second)],
        pybin="/usr/bin/python3",
        child_file=str(tmp_path / "child.py"),
        in_dir=str(tmp_path / "in"),
        work_dir=str(tmp_path / "work"),
        tmp_bytes=1 << 20,
        platform="cpu",
    )
    binds = {
        argv[i + 2]: argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 2].startswith("/site/")
    }
    assert binds == {
        "/site/jax": str(first / "jax"),
        "/site/tqdm": str(first / "tqdm"),
        "/site/tokamax": str(second / "tokamax"),
    }
