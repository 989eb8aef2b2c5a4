"""25k Conv3d_GroupNorm_Mean (KernelBench L2 problem 23)."""

import jax
import jax.numpy as jnp
from jax import lax

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kcb, kb = jax.random.split(key, 4)
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (n, cin, cfg["depth"], cfg["height"], cfg["width"]), dtype=bf16)
    weight = normal_bf16(kw, (cout, cin, k, k, k), 0.02)  # OIDHW
    conv_bias = normal_bf16(kcb, (cout,), 0.02)
    # GroupNorm weight: ones, as in the original (the degeneracy needs it constant within
    # each group). beta is the only input the output depends on: 1 + N(0, 1) keeps its mean
    # well above the tolerance, so a zero or stale output fails.
    gamma = jnp.ones((cout,), dtype=bf16)
    beta = normal_bf16(kb, (cout,), 1.0, shift=1.0)
    return x, weight, conv_bias, gamma, beta


def reference(x, weight, conv_bias, gamma, beta, *, num_groups, eps):
    # Conv result channels-last, bias added there, then back to NCDHW (as in the public
    # suite).
    y = lax.conv_general_dilated(
        x, weight, window_strides=(1, 1, 1), padding="VALID", dimension_numbers=("NCDHW", "OIDHW", "NDHWC")
    )
    y = jnp.transpose(y + conv_bias, (0, 4, 1, 2, 3))
    n, c, d, h, w = y.shape
    g = y.reshape(n, num_groups, c // num_groups, d, h, w)
    mean = jnp.mean(g, axis=(2, 3, 4, 5), keepdims=True)
    var = jnp.var(g, axis=(2, 3, 4, 5), keepdims=True)
    y = ((g - mean) / jnp.sqrt(var + eps)).reshape(n, c, d, h, w)
    y = y * gamma[None, :, None, None, None] + beta[None, :, None, None, None]
    return jnp.mean(y, axis=(1, 2, 3, 4))  # (batch,)


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    d, h, w = cfg["depth"], cfg["height"], cfg["width"]
    out = n * cout * (d - k + 1) * (h - k + 1) * (w - k + 1)
    flops = 2 * out * cin * k**3 + 11 * out
    nbytes = 2 * (n * cin * d * h * w + cout * cin * k**3 + 3 * cout + n)
    return flops, nbytes


DEGENERATE = (
    "GroupNorm's weight is ones (constant within each group), so every group's "
    "normalised values sum to zero and the mean over (C, D, H, W) is exactly "
    "mean(beta) for every sample: x, the convolution weight and bias, and gamma do "
    "not affect the output beyond bf16 rounding noise."
)

WORKLOAD = Workload(
    id="25k",
    slug="25k-conv3d-groupnorm-mean",
    public_name="25k_Conv3d_GroupNorm_Mean",
    title="Conv3d + GroupNorm + mean",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3x3x3 convolution (3 -> 24 channels, no padding), GroupNorm with 8 groups "
    "(statistics of the input, eps 1e-5, affine gamma and beta) and the mean over "
    "channels and space, one value per sample. With gamma constant within each "
    "group the result equals the mean of beta.",
    input_names=("x", "weight", "conv_bias", "gamma", "beta"),
    profiles={
        "full": {
            "batch_size": 128,
            "in_channels": 3,
            "out_channels": 24,
            "kernel_size": 3,
            "depth": 24,
            "height": 32,
            "width": 32,
            "num_groups": 8,
            "eps": 1e-5,
        },
        "small": {
            "batch_size": 2,
            "in_channels": 3,
            "out_channels": 24,
            "kernel_size": 3,
            "depth": 8,
            "height": 16,
            "width": 32,
            "num_groups": 8,
            "eps": 1e-5,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=23,
    degenerate=DEGENERATE,
    insensitive_inputs=("x", "weight", "conv_bias", "gamma"),
    notes="NCDHW input, OIDHW weight. GroupNorm uses the statistics of its input (it has no "
    "running statistics). beta is drawn as 1 + N(0, 1) (public suite: 0.02 N, which "
    "puts the whole output below the tolerance).",
    upstream=Upstream(
        file="JAXBench/benchmark/25k_Conv3d_GroupNorm_Mean/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "degenerate",
            "The published semantics are kept (the output is mean(beta) for every sample); the "
            "workload is marked degenerate and x, weight, conv_bias and gamma are declared "
            "insensitive.",
            DEGENERATE,
        ),
        Deviation(
            "inputs",
            "beta = 1 + N(0, 1) (public: N(0, 1) x 0.02).",
            "N(0, 1) x 0.02 puts the whole output below the tolerance.",
        ),
    ),
)
