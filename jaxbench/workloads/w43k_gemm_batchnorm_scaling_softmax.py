"""43k Gemm_BatchNorm_Scaling_Softmax (KernelBench L2 problem 84)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, kb, kg, kbb, km, kv, ks = jax.random.split(key, 8)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (batch, fin), dtype=bf16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    # 0.1 N (public: 0.02 N): a 0.02 shift of a logit is invisible under the tolerance.
    bias = normal_bf16(kb, (fout,), 0.1)
    # BatchNorm1d affine parameters and running statistics, all random: the public suite's
    # ones / zeros / ones (with eps lost in bf16) reduce BatchNorm to a bias add.
    bn_scale = normal_bf16(kg, (fout,), 0.1, shift=1.0)
    bn_bias = normal_bf16(kbb, (fout,), 0.1)
    bn_mean = normal_bf16(km, (fout,), 0.25)
    bn_var = jax.random.uniform(kv, (fout,), dtype=bf16, minval=2.0, maxval=4.0)
    # Scalar scale: U[0.5, 1.25), wide enough that two draws differ beyond the tolerance.
    scale = jax.random.uniform(ks, (1,), dtype=bf16, minval=0.5, maxval=1.25)
    return x, weight, bias, bn_scale, bn_bias, bn_mean, bn_var, scale


def reference(x, weight, bias, bn_scale, bn_bias, bn_mean, bn_var, scale, *, bn_eps):
    y = jnp.matmul(x, weight) + bias
    # Inference-mode BatchNorm1d with the running statistics passed as inputs.
    y = (y - bn_mean) / jnp.sqrt(bn_var + bn_eps)
    y = bn_scale * y + bn_bias
    y = scale * y
    return jax.nn.softmax(y, axis=1)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 12 * b * n
    return flops, 2 * (b * k + k * n + 5 * n + 1 + b * n)


TOLERANCE_REASON = (
    "A softmax over N = out_features gives probabilities near 1/N "
    "(1.2e-4 at full size, largest ~0.01): the default atol of 1e-2 "
    "accepts an all-zero output there. atol 1e-4 checks every "
    "probability above ~1/N; rtol 6e-2 (a logit error of 0.06) covers "
    "the bf16 rounding of logits of magnitude 2-8 through the bf16 "
    "BatchNorm and scale steps "
    "(a float32-internal implementation differs from the bf16 "
    "reference by up to 3% relative on the small profile)."
)

WORKLOAD = Workload(
    id="43k",
    slug="43k-gemm-batchnorm-scaling-softmax",
    public_name="43k_Gemm_BatchNorm_Scaling_Softmax",
    title="GEMM + BatchNorm + scaling + softmax",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer, inference-mode BatchNorm with running mean and variance "
    "(eps 1e-5), a learned scalar scale, and a softmax over the output features "
    "of each row.",
    input_names=("x", "weight", "bias", "bn_scale", "bn_bias", "bn_mean", "bn_var", "scale"),
    profiles={
        "full": {"batch_size": 4096, "in_features": 8192, "out_features": 8192, "bn_eps": 1e-5, "bn_momentum": 0.1},
        "small": {"batch_size": 128, "in_features": 8192, "out_features": 512, "bn_eps": 1e-5, "bn_momentum": 0.1},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    atol=1e-4,
    rtol=6e-2,
    tolerance_reason=TOLERANCE_REASON,
    kernelbench_id=84,
    notes="BatchNorm runs in inference mode; its running statistics (bn_mean, bn_var) and "
    "affine parameters are inputs, drawn at random (mean 0.25 N, var U[2, 4), "
    "scale 1 + 0.1 N, bias 0.1 N), as are the scalar scale (U[0.5, 1.25)) and the "
    "linear bias (0.1 N); the public suite's ones / zeros / ones reduce BatchNorm to a "
    "bias add. Weight stored (in_features, out_features) as in the public suite. "
    "bn_momentum is unused.",
    upstream=Upstream(
        file="JAXBench/benchmark/43k_Gemm_BatchNorm_Scaling_Softmax/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "tolerance",
            "atol 1e-4, rtol 6e-2 (public harness: atol = rtol = 1e-2).",
            TOLERANCE_REASON,
        ),
        Deviation(
            "inputs",
            "Linear bias 0.1 N; BatchNorm running mean 0.25 N, variance U[2, 4), scale 1 + 0.1 N, "
            "bias 0.1 N; scalar scale U[0.5, 1.25) (public: biases 0.02 N, running mean zeros, "
            "variance ones, scale ones, scalar scale one).",
            "The public ones / zeros / ones reduce BatchNorm to a bias add, a 0.02 shift of a "
            "logit is invisible under the tolerance, and two draws of the scalar scale must "
            "differ beyond it.",
        ),
    ),
)
