"""18k Conv2D_ReLU_BiasAdd (KernelBench L2 problem 1)."""

import jax
import jax.numpy as jnp
from jax import lax

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    kx, kw, kcb, kb = jax.random.split(key, 4)
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    x = jax.random.uniform(kx, (n, cin, cfg["height"], cfg["width"]), dtype=jnp.bfloat16)
    weight = normal_bf16(kw, (cout, cin, k, k), 0.02)  # OIHW
    conv_bias = normal_bf16(kcb, (cout,), 0.02)
    bias = normal_bf16(kb, (cout, 1, 1), 0.02)
    return x, weight, conv_bias, bias


def reference(x, weight, conv_bias, bias):
    # 2-D cross-correlation, stride 1, no padding (PyTorch Conv2d), bf16 result. As in the
    # public suite, the conv result is channels-last until the ReLU, then back to NCHW.
    y = lax.conv_general_dilated(
        x, weight, window_strides=(1, 1), padding="VALID", dimension_numbers=("NCHW", "OIHW", "NHWC")
    )
    y = jax.nn.relu(y + conv_bias)
    y = jnp.transpose(y, (0, 3, 1, 2))
    return y + bias  # (C, 1, 1) broadcast over H, W


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    ho, wo = cfg["height"] - k + 1, cfg["width"] - k + 1
    out = n * cout * ho * wo
    flops = 2 * out * cin * k * k + 3 * out
    nbytes = 2 * (n * cin * cfg["height"] * cfg["width"] + cout * cin * k * k + 2 * cout + out)
    return flops, nbytes


WORKLOAD = Workload(
    id="18k",
    slug="18k-conv2d-relu-biasadd",
    public_name="18k_Conv2D_ReLU_BiasAdd",
    title="Conv2d + ReLU + bias add",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3x3 convolution (64 -> 128 channels, stride 1, no padding) with its bias, "
    "a ReLU, and a second learned per-channel bias added after the activation.",
    input_names=("x", "weight", "conv_bias", "bias"),
    profiles={
        "full": {
            "batch_size": 128,
            "in_channels": 64,
            "out_channels": 128,
            "kernel_size": 3,
            "height": 128,
            "width": 128,
        },
        "small": {
            "batch_size": 2,
            "in_channels": 64,
            "out_channels": 128,
            "kernel_size": 3,
            "height": 16,
            "width": 128,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=1,
    notes="NCHW input, OIHW weight (PyTorch layouts); bias has shape (out_channels, 1, 1). "
    "The original draws the second bias from N(0, 1); here it is N(0, 1) x 0.02 as in "
    "the public suite.",
    upstream=Upstream(
        file="JAXBench/benchmark/18k_Conv2D_ReLU_BiasAdd/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
