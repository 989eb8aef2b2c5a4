"""Hardware detection never leaves a device open in the process that asked."""

import subprocess
import sys

import pytest

from jaxbench import hardware


def test_detection_in_a_child_leaves_the_caller_without_a_backend():
    code = (
        "from jaxbench import hardware as h; t = h.detect_in_child(); "
        "import jax; print(t.slug, t.platform, h.initialized_backends())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split(None, 2) == ["cpu", "cpu", "[]\n"]


def test_initialized_backends_reports_what_this_process_opened():
    import jax

    jax.devices("cpu")
    assert "cpu" in hardware.initialized_backends()


def test_the_h200_target_runs_the_full_profile_without_the_tpu_precheck():
    from jaxbench import hardware

    t = hardware.get_target("gpu-h200")
    assert (t.platform, t.profile, t.queue) == ("gpu", "full", "eval.gpu-h200")
    assert (t.peak_flops, t.peak_bandwidth) == (989.5e12, 4.8e12)
    assert t.is_accelerator and not t.prechecked
    assert hardware.slug_for_device_kind("gpu", "NVIDIA H200") == "gpu-h200"


def test_a_worker_refuses_a_host_whose_accelerator_is_missing(monkeypatch):
    cpu, v6e = hardware.get_target("cpu"), hardware.get_target("tpu-v6e")
    assert hardware.device_missing("cpu", cpu) is None
    assert hardware.device_missing("tpu", v6e) is None
    msg = hardware.device_missing("tpu", cpu)
    assert msg and msg.startswith("the tpu plugin is installed but JAX found no tpu device (it fell back to cpu)")
    assert "check-env" in msg and "JAXBENCH_WORKER_HARDWARE=cpu" in msg
    # the worker's path: libtpu installed, JAX fell back to the CPU (a real detection child)
    from jaxbench.sandbox import device

    monkeypatch.setattr(device, "installed_platform", lambda: "tpu")
    monkeypatch.setattr(device, "exclusive", lambda platform: False)  # no real TPU lock here
    with pytest.raises(hardware.DeviceMissing, match="JAX found no tpu device"):
        hardware.detect_for_worker()
    monkeypatch.setattr(device, "installed_platform", lambda: "cpu")
    assert hardware.detect_for_worker().slug == "cpu"
