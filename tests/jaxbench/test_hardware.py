"""Hardware detection never leaves a device open in the process that asked."""

import subprocess
import sys

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
    assert (t.peak_flops, t.peak_bandwidth) == (989e12, 4.8e12)
    assert t.is_accelerator and not t.prechecked
    assert hardware.slug_for_device_kind("gpu", "NVIDIA H200") == "gpu-h200"
