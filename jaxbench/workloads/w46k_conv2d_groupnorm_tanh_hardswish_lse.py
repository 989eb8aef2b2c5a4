"""46k Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp (KernelBench L2 problem 92)."""

import jax
import jax.numpy as jnp
from jax import lax

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kb, kg, kgb = jax.random.split(key, 5)
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (n, cin, cfg["height"], cfg["width"]), dtype=bf16)
    # Scales chosen so that every input matters beyond the tolerance (see notes): conv weight
    # 0.2 N (about Kaiming scale for fan-in 72), conv bias 0.5 N, GroupNorm affine 1 + N and N.
    conv_weight = normal_bf16(kw, (cout, cin, k, k), 0.2)  # OIHW
    conv_bias = normal_bf16(kb, (cout,), 0.5)
    gn_weight = normal_bf16(kg, (cout,), 1.0, shift=1.0)
    gn_bias = normal_bf16(kgb, (cout,), 1.0)
    return x, conv_weight, conv_bias, gn_weight, gn_bias


def reference(x, conv_weight, conv_bias, gn_weight, gn_bias, *, groups, eps):
    c = lax.conv_general_dilated(
        x, conv_weight, window_strides=(1, 1), padding="VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")
    )
    c = c + conv_bias[None, :, None, None]
    n, ch, h, w = c.shape
    # GroupNorm: statistics per (image, group) over (channels of the group, H, W).
    g = c.reshape(n, groups, ch // groups, h, w)
    mean = jnp.mean(g, axis=(2, 3, 4), keepdims=True)
    var = jnp.var(g, axis=(2, 3, 4), keepdims=True)
    g = (g - mean) / jnp.sqrt(var + eps)
    normed = g.reshape(n, ch, h, w) * gn_weight[None, :, None, None] + gn_bias[None, :, None, None]
    t = jnp.tanh(normed)
    hs = t * jnp.minimum(jnp.maximum(t + 3.0, 0.0), 6.0) / 6.0  # HardSwish
    r = c + hs  # residual from the pre-norm conv output
    return jax.nn.logsumexp(r, axis=1, keepdims=True)


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    ho, wo = cfg["height"] - k + 1, cfg["width"] - k + 1
    elems = n * cout * ho * wo
    flops = 2 * elems * cin * k * k + 20 * elems
    nbytes = 2 * (n * cin * cfg["height"] * cfg["width"] + cout * cin * k * k + 3 * cout + n * ho * wo)
    return flops, nbytes


WORKLOAD = Workload(
    id="46k",
    slug="46k-conv2d-groupnorm-tanh-hardswish-residualadd-logsumexp",
    public_name="46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    title="Conv2d + GroupNorm + tanh + HardSwish + residual add + logsumexp",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3x3 convolution (8 -> 64 channels, no padding), GroupNorm with 16 groups "
    "of 4 channels, tanh and HardSwish, a residual add of the convolution "
    "output, and a logsumexp over the channels (output (batch, 1, H', W')).",
    input_names=("x", "conv_weight", "conv_bias", "gn_weight", "gn_bias"),
    profiles={
        "full": {
            "batch_size": 128,
            "in_channels": 8,
            "out_channels": 64,
            "kernel_size": 3,
            "groups": 16,
            "eps": 1e-5,
            "height": 128,
            "width": 128,
        },
        "small": {
            "batch_size": 2,
            "in_channels": 8,
            "out_channels": 64,
            "kernel_size": 3,
            "groups": 16,
            "eps": 1e-5,
            "height": 128,
            "width": 128,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=92,
    notes="NCHW input, OIHW weight (PyTorch layouts). GroupNorm uses per-sample statistics "
    "(no running statistics); its affine weight and bias are inputs. Input scales "
    "differ from the public suite (conv weight and bias 0.02 N, GroupNorm ones and "
    "zeros): there the 64 channels are nearly equal, the logsumexp is about "
    "log 64 + 0.2 everywhere (pixel spread 0.035 against a tolerance of 0.053, so a "
    "constant passed for most pixels) and conv_bias, gn_weight and gn_bias changed "
    "the output by less than the tolerance. Here conv weight 0.2 N (about Kaiming "
    "scale for fan-in 72), conv bias 0.5 N, gn_weight 1 + N, gn_bias N.",
    upstream=Upstream(
        file="JAXBench/benchmark/46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "inputs",
            "conv_weight N(0, 1) x 0.2, conv_bias x 0.5, GroupNorm gn_weight 1 + N(0, 1) and "
            "gn_bias N(0, 1) (public: conv weight and bias x 0.02, GroupNorm ones and zeros).",
            "With the public scales the 64 channels are nearly equal: the logsumexp is about log "
            "64 + 0.2 everywhere (pixel spread 0.035 against a tolerance of 0.053, so a constant "
            "passes for most pixels), and conv_bias, gn_weight and gn_bias change the output by "
            "less than the tolerance.",
        ),
    ),
)
