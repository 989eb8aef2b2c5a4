"""28k ConvTranspose3d_LayerNorm_GELU_Scaling (KernelBench L2 problem 34)."""

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
    x = jax.random.uniform(kx, (n, cin, cfg["depth"], cfg["height"], cfg["width"]), dtype=bf16)
    # PyTorch ConvTranspose3d layout (in, out, kD, kH, kW). The public suite draws it from
    # N(0, 1) unscaled; x 0.02 here (policy).
    conv_weight = normal_bf16(kw, (cin, cout, k, k, k), 0.02)
    conv_bias = normal_bf16(kcb, (cout,), 0.02)
    # LayerNorm(out_channels) parameters; they run along the last (W) axis, whose size
    # equals out_channels in this problem.
    ln_weight = normal_bf16(kg, (cout,), 0.1, shift=1.0)
    ln_bias = normal_bf16(kb, (cout,), 0.1)
    return x, conv_weight, conv_bias, ln_weight, ln_bias


def conv_transpose3d(x, w, stride, padding):
    """PyTorch ConvTranspose3d (no output padding, no dilation, groups 1), exactly:
    out[n, o, z] = sum over i and taps t with z = stride * z_in - padding + t (per axis) of
    x[n, i, z_in] * w[i, o, t]. Realised as a correlation of the stride-dilated input with
    the spatially flipped kernel, padded by k - 1 - padding on each side. NCDHW input,
    (in, out, kD, kH, kW) weight; the result is channels-last (N, D, H, W, out)."""
    k = w.shape[2]
    pad = k - 1 - padding
    return lax.conv_general_dilated(
        x,
        jnp.flip(w, axis=(2, 3, 4)),
        window_strides=(1, 1, 1),
        padding=[(pad, pad)] * 3,
        lhs_dilation=(stride,) * 3,
        dimension_numbers=("NCDHW", "IODHW", "NDHWC"),
    )


def reference(x, conv_weight, conv_bias, ln_weight, ln_bias, *, stride, padding, eps, scaling_factor):
    # Bias added channels-last, then back to NCDHW (as in the public suite): the bias sum
    # is materialised in bf16, a rounding point this sensitive workload's baseline keeps.
    y = conv_transpose3d(x, conv_weight, stride, padding)
    y = jnp.transpose(y + conv_bias, (0, 4, 1, 2, 3))
    # nn.LayerNorm(out_channels) on an NCDHW tensor normalises the LAST axis (W).
    mean = jnp.mean(y, axis=-1, keepdims=True)
    var = jnp.mean((y - mean) ** 2, axis=-1, keepdims=True)
    y = (y - mean) / jnp.sqrt(var + eps)
    y = y * ln_weight + ln_bias
    y = jax.nn.gelu(y)  # tanh approximation
    return y * scaling_factor


def _valid_taps(n_in, k, stride, padding):
    """Number of (input position, kernel tap) pairs that land inside the output, per axis."""
    n_out = (n_in - 1) * stride - 2 * padding + k
    return sum(1 for i in range(n_in) for t in range(k) if 0 <= stride * i - padding + t < n_out)


def cost(cfg):
    n, cin, cout, k = cfg["batch_size"], cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]
    s, p = cfg["stride"], cfg["padding"]
    dims = (cfg["depth"], cfg["height"], cfg["width"])
    taps = 1
    out_sp = 1
    for d in dims:
        taps *= _valid_taps(d, k, s, p)
        out_sp *= (d - 1) * s - 2 * p + k
    out = n * cout * out_sp
    flops = 2 * n * cin * cout * taps + 20 * out
    nbytes = 2 * (n * cin * dims[0] * dims[1] * dims[2] + cin * cout * k**3 + 3 * cout + out)
    return flops, nbytes


WORKLOAD = Workload(
    id="28k",
    slug="28k-convtranspose3d-layernorm-gelu-scaling",
    public_name="28k_ConvTranspose3d_LayerNorm_GELU_Scaling",
    title="ConvTranspose3d + LayerNorm + GELU + scaling",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="conv",
    description="A 3-D transposed convolution (32 -> 64 channels, kernel 4, stride 2, "
    "padding 1) with bias, LayerNorm over the last (width) axis (eps 1e-5, affine), "
    "a tanh-form GELU and a scaling by 1.0.",
    input_names=("x", "conv_weight", "conv_bias", "ln_weight", "ln_bias"),
    profiles={
        "full": {
            "batch_size": 32,
            "in_channels": 32,
            "out_channels": 64,
            "kernel_size": 4,
            "depth": 16,
            "height": 32,
            "width": 32,
            "stride": 2,
            "padding": 1,
            "eps": 1e-5,
            "scaling_factor": 1.0,
        },
        "small": {
            "batch_size": 2,
            "in_channels": 8,
            "out_channels": 16,
            "kernel_size": 4,
            "depth": 4,
            "height": 8,
            "width": 8,
            "stride": 2,
            "padding": 1,
            "eps": 1e-5,
            "scaling_factor": 1.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=34,
    notes="NCDHW input; weight in the (in, out, kD, kH, kW) layout of nn.ConvTranspose3d. "
    "The original's nn.LayerNorm(out_channels) works only because the output width "
    "(2 x input width) equals out_channels; both profiles keep that. LayerNorm has no "
    "running statistics; its weight 1 + 0.1 N and bias 0.1 N are random (public: ones "
    "and zeros). The conv bias is constant along W, so the LayerNorm over W removes it "
    "in exact arithmetic; in the bf16 baseline it still moves roundings (about 1e-3 of "
    "the outputs by more than the tolerance). Sensitive: an f32-internal computation "
    "differs from this bf16 flow by more than the tolerance on a few outputs in 1e4. "
    "FLOPs count only the kernel taps that land in the output (XLA's convention for "
    "an input-dilated convolution).",
    upstream=Upstream(
        file="JAXBench/benchmark/28k_ConvTranspose3d_LayerNorm_GELU_Scaling/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "inputs",
            "conv_weight and conv_bias N(0, 1) x 0.02, LayerNorm ln_weight 1 + 0.1 N and ln_bias "
            "0.1 N (public: conv_weight N(0, 1) unscaled, conv_bias zeros, LayerNorm ones and "
            "zeros).",
            'the input policy of WORKLOADS.md, "Conventions": weights N(0, 1) x 0.02 as in the '
            "other public files, and no all-zero or constant parameters, so that every input the "
            "output depends on changes it beyond the tolerance.",
        ),
    ),
)
