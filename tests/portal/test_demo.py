"""The demo submits the examples written for its target's platform."""

import pytest

from jaxbench.kernels import examples
from portal import demo
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_gpu_demo_submits_the_triton_examples_and_a_cpu_demo_the_tpu_ones():
    factories.hardware()  # the registry's targets
    gpu = demo.example_files("gpu-h200")
    assert set(gpu) == set(examples.EXAMPLES_GPU) == {"12p", "8p", "1p"}
    assert all("from jax.experimental.pallas import triton" in code for code in gpu.values()), gpu.keys()
    cpu = demo.example_files("cpu")
    assert set(cpu) == set(examples.EXAMPLES) and cpu["12p"] != gpu["12p"]
    trace = demo.demo_trace("gpu-h200")
    assert '"hardware": "gpu-h200"' in trace and gpu["8p"].splitlines()[0] in trace
