"""33k Conv3d_Mish_Tanh (KernelBench L2 problem 47)."""

import jax
import jax.numpy as jnp
from jax import lax

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Upstream


def create_inputs(cfg, key):
    kx, kw, kb = jax.random.split(key, 3)
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (n, cin, cfg["depth"], cfg["height"], cfg["width"]), dtype=bf16)
    weight = normal_bf16(kw, (cout, cin, k, k, k), 0.02)  # OIDHW
    bias = normal_bf16(kb, (cout,), 0.02)
    return x, weight, bias


def reference(x, weight, bias):
    # Conv result channels-last through the activations, then back to NCDHW (as in the
    # public suite).
    y = lax.conv_general_dilated(
        x, weight, window_strides=(1, 1, 1), padding="VALID", dimension_numbers=("NCDHW", "OIDHW", "NDHWC")
    )
    y = y + bias
    # Mish with softplus written naively, log(1 + exp(y)), as in the public suite.
    y = y * jnp.tanh(jnp.log(1 + jnp.exp(y)))
    return jnp.transpose(jnp.tanh(y), (0, 4, 1, 2, 3))


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    d, h, w = cfg["depth"], cfg["height"], cfg["width"]
    out = n * cout * (d - k + 1) * (h - k + 1) * (w - k + 1)
    flops = 2 * out * cin * k**3 + 8 * out
    nbytes = 2 * (n * cin * d * h * w + cout * cin * k**3 + cout + out)
    return flops, nbytes


WORKLOAD = Workload(
    id="33k",
    slug="33k-conv3d-mish-tanh",
    public_name="33k_Conv3d_Mish_Tanh",
    title="Conv3d + Mish + tanh",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3x3x3 convolution (32 -> 64 channels, stride 1, no padding) with bias, a "
    "Mish activation and a tanh.",
    input_names=("x", "weight", "bias"),
    profiles={
        "full": {
            "batch_size": 16,
            "in_channels": 32,
            "out_channels": 64,
            "kernel_size": 3,
            "depth": 32,
            "height": 64,
            "width": 64,
        },
        "small": {
            "batch_size": 2,
            "in_channels": 32,
            "out_channels": 64,
            "kernel_size": 3,
            "depth": 8,
            "height": 16,
            "width": 32,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=47,
    notes="NCDHW input, OIDHW weight (PyTorch layouts).",
    upstream=Upstream(
        file="JAXBench/benchmark/33k_Conv3d_Mish_Tanh/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(),
)
