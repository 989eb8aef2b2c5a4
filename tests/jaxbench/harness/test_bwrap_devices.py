"""The device nodes a GPU (or TPU) child is given, from a fake root's /dev and the NVIDIA
driver's /proc table, and where they land in the bubblewrap command line."""

import os

import pytest

from jaxbench.sandbox import bwrap

PCI = ("0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0")


def _root(tmp_path, gpus=4, shared=bwrap.NVIDIA_SHARED_NODES, minors=None, extra=("null", "accel0", "dri", "kfd")):
    """A fake host: /dev with ``gpus`` NVIDIA nodes, the shared ones and ``extra``; with
    ``minors``, the driver's /proc table (PCI bus order -> device minor)."""
    dev = tmp_path / "dev"
    dev.mkdir()
    for i in range(gpus):
        (dev / f"nvidia{i}").touch()
    for n in shared:
        (dev / n).mkdir() if n == "nvidia-caps" else (dev / n).touch()
    for n in extra:
        (dev / n).touch()
    if minors is not None:
        for bus, minor in zip(PCI, minors):
            d = tmp_path / "proc" / "driver" / "nvidia" / "gpus" / bus
            d.mkdir(parents=True)
            (d / "information").write_text(f"Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nDevice Minor: \t {minor}\n")
    return str(tmp_path)


SHARED = [f"/dev/{n}" for n in bwrap.NVIDIA_SHARED_NODES]


def test_every_gpu_and_the_shared_nodes_when_no_gpu_is_selected(tmp_path):
    root = _root(tmp_path, gpus=11)
    # numeric order (nvidia10 after nvidia9), then the shared nodes; nothing else from /dev
    assert bwrap.nvidia_device_nodes(root) == [f"/dev/nvidia{i}" for i in range(11)] + SHARED
    assert bwrap.nvidia_device_nodes(root, "") == bwrap.nvidia_device_nodes(root)


def test_only_the_visible_gpus(tmp_path):
    root = _root(tmp_path)
    assert bwrap.nvidia_device_nodes(root, "2") == ["/dev/nvidia2", *SHARED]
    assert bwrap.nvidia_device_nodes(root, "3, 1") == ["/dev/nvidia1", "/dev/nvidia3", *SHARED]
    assert bwrap.nvidia_device_nodes(root, "7") == SHARED  # no such GPU: the child sees none


def test_visible_indices_map_to_minors_through_the_driver_table(tmp_path):
    # the driver numbered its nodes out of PCI order: CUDA index 0 (first bus) is /dev/nvidia2
    root = _root(tmp_path, minors=(2, 0, 3, 1))
    assert bwrap.nvidia_device_nodes(root, "0") == ["/dev/nvidia2", *SHARED]
    assert bwrap.nvidia_device_nodes(root, "1,3") == ["/dev/nvidia0", "/dev/nvidia1", *SHARED]


def test_uuids_and_mig_instances_get_every_gpu(tmp_path):
    root = _root(tmp_path)
    every = [f"/dev/nvidia{i}" for i in range(4)] + SHARED
    assert bwrap.nvidia_device_nodes(root, "GPU-8f2a6c1e-0000-1111-2222-333344445555") == every
    assert bwrap.nvidia_device_nodes(root, "MIG-GPU-8f2a/1/0") == every


def test_only_shared_nodes_that_exist(tmp_path):
    root = _root(tmp_path, gpus=1, shared=("nvidiactl", "nvidia-uvm"))
    assert bwrap.nvidia_device_nodes(root) == ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]


def test_device_nodes_per_platform(tmp_path):
    root = _root(tmp_path, gpus=2)
    env = {"CUDA_VISIBLE_DEVICES": "1"}
    assert bwrap.device_nodes("gpu", root, env) == ["/dev/nvidia1", *SHARED]
    assert bwrap.device_nodes("tpu", root, env) == ["/dev/accel0"]
    assert bwrap.device_nodes("cpu", root, env) == []
    # no NVIDIA driver: a ROCm host's nodes
    amd = tmp_path / "amd"
    amd.mkdir()
    assert bwrap.device_nodes("gpu", _root(amd, gpus=0, shared=()), {}) == ["/dev/dri", "/dev/kfd"]


@pytest.fixture
def fake_bwrap(monkeypatch):
    monkeypatch.setattr(bwrap, "bwrap_info", lambda: {"path": "/usr/bin/bwrap", "version": "0", "flags": []})


def _argv(tmp_path, platform, nodes):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    return bwrap.bwrap_argv(
        {"JAX_PLATFORMS": platform},
        lambda p: p,
        prefix=str(tmp_path / "prefix"),
        site=str(site),
        pybin="/usr/bin/python3",
        child_file=str(tmp_path / "child.py"),
        in_dir=str(tmp_path / "in"),
        work_dir=str(tmp_path / "work"),
        tmp_bytes=1 << 20,
        platform=platform,
        nodes=nodes,
    )


def _dev_binds(argv):
    return [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--dev-bind-try"]


def test_argv_binds_the_gpu_nodes_after_the_fresh_dev(tmp_path, fake_bwrap):
    nodes = bwrap.nvidia_device_nodes(_root(tmp_path), "1")
    argv = _argv(tmp_path, "gpu", nodes)
    assert _dev_binds(argv) == [[n, n] for n in nodes]
    # mounted over bubblewrap's minimal /dev (later mounts win), before the root goes read-only
    first = argv.index("--dev-bind-try")
    assert argv.index("--dev") < first < argv.index("--remount-ro")
    assert "/dev/nvidia0" not in argv and "/dev/nvidia2" not in argv


def test_argv_binds_no_device_on_cpu(tmp_path, fake_bwrap):
    argv = _argv(tmp_path, "cpu", None)
    assert _dev_binds(argv) == [] and not any(a.startswith("/dev/nvidia") for a in argv)


def test_argv_discovers_the_host_nodes_by_default(tmp_path, fake_bwrap, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    argv = _argv(tmp_path, "gpu", None)
    assert [a for a, _ in _dev_binds(argv)] == bwrap.device_nodes("gpu", "/", dict(os.environ))
