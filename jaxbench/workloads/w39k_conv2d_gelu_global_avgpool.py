"""39k Conv2d_GELU_GlobalAvgPool (KernelBench L2 problem 67)."""

import jax
import jax.numpy as jnp
from jax import lax

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, ko, kw, kb = jax.random.split(key, 4)
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    x = jax.random.uniform(kx, (n, cin, cfg["height"], cfg["width"]), dtype=jnp.bfloat16)
    # Plus a random offset per (image, channel), N(0, 1). The global average pool sees x
    # only through per-image statistics: with i.i.d. U[0, 1) pixels every draw gives the same
    # output within the tolerance, so a kernel that ignored x would pass.
    x = x + normal_bf16(ko, (n, cin, 1, 1))
    weight = normal_bf16(kw, (cout, cin, k, k), 0.02)  # OIHW
    bias = normal_bf16(kb, (cout,), 0.02)
    return x, weight, bias


def reference(x, weight, bias):
    # 2-D cross-correlation, stride 1, no padding (PyTorch Conv2d), bf16 result.
    y = lax.conv_general_dilated(
        x, weight, window_strides=(1, 1), padding="VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")
    )
    y = y + bias[None, :, None, None]
    y = jax.nn.gelu(y)
    # Global average pool (adaptive_avg_pool2d to 1x1, squeezed): (batch, channels).
    return jnp.mean(y, axis=(2, 3))


def _out_hw(cfg):
    k = cfg["kernel_size"]
    return cfg["height"] - k + 1, cfg["width"] - k + 1


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    ho, wo = _out_hw(cfg)
    out_elems = n * cout * ho * wo
    flops = 2 * out_elems * cin * k * k + 10 * out_elems
    nbytes = 2 * (n * cin * cfg["height"] * cfg["width"] + cout * cin * k * k + cout + n * cout)
    return flops, nbytes


WORKLOAD = Workload(
    id="39k",
    slug="39k-conv2d-gelu-global-avgpool",
    public_name="39k_Conv2d_GELU_GlobalAvgPool",
    title="Conv2d + GELU + global average pool",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3x3 convolution (8 -> 64 channels, no padding) with bias, a tanh-form "
    "GELU, and a global average pool over the spatial axes, giving one value "
    "per image and channel.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 128,
            "in_channels": 8,
            "out_channels": 64,
            "kernel_size": 3,
            "height": 256,
            "width": 256,
        },
        "small": {"batch_size": 4, "in_channels": 8, "out_channels": 64, "kernel_size": 3, "height": 128, "width": 128},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=67,
    notes="NCHW input, OIHW weight (PyTorch layouts); output (batch, out_channels). x is "
    "U[0, 1) plus a random N(0, 1) offset per (image, channel): with the public "
    "suite's i.i.d. U[0, 1) pixels the pooled output is the same for every draw "
    "within the tolerance (x did not matter).",
    upstream=Upstream(
        file="JAXBench/benchmark/39k_Conv2d_GELU_GlobalAvgPool/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "inputs",
            "x = U[0, 1) plus a N(0, 1) offset per (image, channel) (public: i.i.d. U[0, 1) pixels).",
            "The global average pool sees x only through per-image statistics: with i.i.d. pixels "
            "every draw gives the same output within the tolerance, so a kernel that ignored x "
            "would pass.",
        ),
    ),
)
