"""22k Conv2d_InstanceNorm_Divide (KernelBench L2 problem 17)."""

import jax
import jax.numpy as jnp
from jax import lax

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kcb, kg, kb = jax.random.split(key, 5)
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (n, cin, cfg["height"], cfg["width"]), dtype=bf16)
    weight = normal_bf16(kw, (cout, cin, k, k), 0.02)  # OIHW
    conv_bias = normal_bf16(kcb, (cout,), 0.02)
    # Affine parameters of the instance norm, random (the public suite's ones / zeros make
    # the affine step an identity).
    in_weight = normal_bf16(kg, (cout,), 0.1, shift=1.0)
    in_bias = normal_bf16(kb, (cout,), 0.1)
    return x, weight, conv_bias, in_weight, in_bias


def reference(x, weight, conv_bias, in_weight, in_bias, *, eps, divide_by):
    # Conv result channels-last, bias added there, then back to NCHW (as in the public
    # suite): the bias sum is materialised in bf16, a rounding point this sensitive
    # workload's baseline keeps.
    y = lax.conv_general_dilated(
        x, weight, window_strides=(1, 1), padding="VALID", dimension_numbers=("NCHW", "OIHW", "NHWC")
    )
    y = jnp.transpose(y + conv_bias, (0, 3, 1, 2))
    # Instance norm: per (sample, channel) statistics over H, W; biased variance.
    mean = jnp.mean(y, axis=(2, 3), keepdims=True)
    var = jnp.var(y, axis=(2, 3), keepdims=True)
    y = (y - mean) / jnp.sqrt(var + eps)
    y = y * in_weight[None, :, None, None] + in_bias[None, :, None, None]
    return y / divide_by


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    ho, wo = cfg["height"] - k + 1, cfg["width"] - k + 1
    out = n * cout * ho * wo
    flops = 2 * out * cin * k * k + 10 * out
    nbytes = 2 * (n * cin * cfg["height"] * cfg["width"] + cout * cin * k * k + 3 * cout + out)
    return flops, nbytes


WORKLOAD = Workload(
    id="22k",
    slug="22k-conv2d-instancenorm-divide",
    public_name="22k_Conv2d_InstanceNorm_Divide",
    title="Conv2d + InstanceNorm + divide",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3x3 convolution (64 -> 128 channels, no padding), instance normalisation "
    "over each feature map (eps 1e-5) with a per-channel affine, and a division "
    "by 2. Instance norm has no running statistics: it always uses the "
    "statistics of its input.",
    input_names=("x", "weight", "conv_bias", "in_weight", "in_bias"),
    profiles={
        "full": {
            "batch_size": 128,
            "in_channels": 64,
            "out_channels": 128,
            "kernel_size": 3,
            "height": 128,
            "width": 128,
            "eps": 1e-5,
            "divide_by": 2.0,
        },
        "small": {
            "batch_size": 2,
            "in_channels": 64,
            "out_channels": 128,
            "kernel_size": 3,
            "height": 16,
            "width": 128,
            "eps": 1e-5,
            "divide_by": 2.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=17,
    notes="NCHW input, OIHW weight. The affine in_weight / in_bias are inputs as in the "
    "public suite (the original InstanceNorm2d has affine=False), drawn as 1 + 0.1 N "
    "and 0.1 N. The conv bias is constant over each feature map, so the instance norm "
    "removes it in exact arithmetic; in the bf16 baseline it still moves roundings. "
    "Sensitive: an f32-internal computation differs from this bf16 flow by more than "
    "the tolerance on about 0.1% of the outputs (small profile).",
    upstream=Upstream(
        file="JAXBench/benchmark/22k_Conv2d_InstanceNorm_Divide/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "inputs",
            "InstanceNorm affine in_weight 1 + 0.1 N and in_bias 0.1 N (public: ones and zeros).",
            "The public ones / zeros make the affine step an identity, which a kernel could skip unnoticed.",
        ),
    ),
)
