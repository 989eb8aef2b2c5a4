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
