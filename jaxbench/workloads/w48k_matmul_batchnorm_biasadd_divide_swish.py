"""48k Matmul_BatchNorm_BiasAdd_Divide_Swish (KernelBench L2 problem 97)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kw, klb, kg, kbb, km, kv, kb = jax.random.split(key, 8)
    batch, fin, fout = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (batch, fin), dtype=bf16)
    # Stored (in, out) and used as x @ weight, as in the public suite (nn.Linear.weight.T).
    weight = normal_bf16(kw, (fin, fout), 0.02)
    linear_bias = normal_bf16(klb, (fout,), 0.02)
    # BatchNorm1d affine parameters and running statistics, all random: the public suite's
    # ones / zeros / zeros / ones make BatchNorm an identity in bf16.
    bn_scale = normal_bf16(kg, (fout,), 0.1, shift=1.0)
    bn_bias = normal_bf16(kbb, (fout,), 0.1)
    bn_mean = normal_bf16(km, (fout,), 0.5)
    bn_var = jax.random.uniform(kv, (fout,), dtype=bf16, minval=0.5, maxval=1.5)
    # Scalar bias: N(0, 1) (public: 0.02 N, a shift below the tolerance).
    bias = normal_bf16(kb, (1,))
    return x, weight, linear_bias, bn_scale, bn_bias, bn_mean, bn_var, bias


def reference(x, weight, linear_bias, bn_scale, bn_bias, bn_mean, bn_var, bias, *, bn_eps, divide_value):
    # Precision-sensitive: bf16 GEMM result, every elementwise step in bf16.
    y = jnp.matmul(x, weight) + linear_bias
    # Inference-mode BatchNorm1d with the running statistics passed as inputs.
    y = (y - bn_mean) / jnp.sqrt(bn_var + bn_eps)
    y = bn_scale * y + bn_bias
    y = y + bias
    y = y / divide_value
    return y * jax.nn.sigmoid(y)


def cost(cfg):
    b, k, n = cfg["batch_size"], cfg["in_features"], cfg["out_features"]
    flops = 2 * b * k * n + 12 * b * n
    return flops, 2 * (b * k + k * n + 5 * n + 1 + b * n)


WORKLOAD = Workload(
    id="48k",
    slug="48k-matmul-batchnorm-biasadd-divide-swish",
    public_name="48k_Matmul_BatchNorm_BiasAdd_Divide_Swish",
    title="Matmul + BatchNorm + bias add + divide + Swish",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="A linear layer, inference-mode BatchNorm with running mean and variance "
    "(eps 1e-5), a scalar bias add, a division by 1.0 and Swish.",
    input_names=("x", "weight", "linear_bias", "bn_scale", "bn_bias", "bn_mean", "bn_var", "bias"),
    profiles={
        "full": {
            "batch_size": 4096,
            "in_features": 8192,
            "out_features": 8192,
            "bn_eps": 1e-5,
            "bn_momentum": 0.1,
            "divide_value": 1.0,
        },
        "small": {
            "batch_size": 128,
            "in_features": 8192,
            "out_features": 512,
            "bn_eps": 1e-5,
            "bn_momentum": 0.1,
            "divide_value": 1.0,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=97,
    notes="BatchNorm runs in inference mode; its running statistics (bn_mean, bn_var) and "
    "affine parameters are inputs, drawn at random (mean 0.5 N, var U[0.5, 1.5), "
    "scale 1 + 0.1 N, bias 0.1 N), and the scalar bias is N(0, 1) (public: 0.02 N); "
    "the public suite's ones / zeros / zeros / ones make BatchNorm an identity. The "
    "division by 1.0 is the original problem's constant. Weight stored "
    "(in_features, out_features) as in the public suite. Precision-sensitive: the "
    "reference mirrors the bf16 flow. bn_momentum is unused.",
    upstream=Upstream(
        file="JAXBench/benchmark/48k_Matmul_BatchNorm_BiasAdd_Divide_Swish/baseline.py",
        commit="cdb22344568ebdbe985dee3cbbf9015597614a68",
        date="2026-07-09",
    ),
    deviations=(
        Deviation(
            "inputs",
            "BatchNorm running mean 0.5 N, variance U[0.5, 1.5), scale 1 + 0.1 N, bias 0.1 N; "
            "scalar bias N(0, 1) (public: ones / zeros / zeros / ones and a 0.02 N scalar bias).",
            "The public running statistics make BatchNorm an identity in bf16, and a 0.02 scalar "
            "bias shifts the output by less than the tolerance.",
        ),
    ),
)
