"""32k Gemm_Sigmoid_LogSumExp (KernelBench L2 problem 45)."""

import jax
import jax.numpy as jnp

from ._inputs import normal_bf16
from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, k1, kb1, k2, kb2 = jax.random.split(key, 5)
    batch, fin, hid, fout = (cfg["batch_size"], cfg["input_size"], cfg["hidden_size"], cfg["output_size"])
    bf16 = jnp.bfloat16
    x = jax.random.uniform(kx, (batch, fin), dtype=bf16)
    # Larger scales than the usual 0.02 N: with those, the logits vary by a few hundredths
    # and the logsumexp is log(output_size) plus a near-constant, so a constant output (or
    # one that ignores x or the biases) would pass. These make every input count.
    w1 = normal_bf16(k1, (hid, fin), 0.1)  # (out, in)
    b1 = normal_bf16(kb1, (hid,))
    w2 = normal_bf16(k2, (fout, hid), 0.1)  # (out, in)
    b2 = normal_bf16(kb2, (fout,))
    return x, w1, b1, w2, b2


def reference(x, w1, b1, w2, b2):
    h = jax.nn.sigmoid(jnp.matmul(x, w1.T) + b1)
    z = jnp.matmul(h, w2.T) + b2
    return jax.nn.logsumexp(z, axis=1)  # (batch,), no keepdims


def cost(cfg):
    b, k, h, n = cfg["batch_size"], cfg["input_size"], cfg["hidden_size"], cfg["output_size"]
    flops = 2 * b * k * h + 2 * b * h * n + 5 * b * h + 5 * b * n
    return flops, 2 * (b * k + k * h + h + h * n + n + b)


WORKLOAD = Workload(
    id="32k",
    slug="32k-gemm-sigmoid-logsumexp",
    public_name="32k_Gemm_Sigmoid_LogSumExp",
    title="GEMM + sigmoid + GEMM + logsumexp",
    source="kernelbench-l2",
    model="KernelBench L2",
    category="fused-gemm",
    description="Two linear layers with a sigmoid between them (2048 -> 4096 -> 1024 "
    "features), then a logsumexp over the output features, one value per row.",
    input_names=("x", "w1", "b1", "w2", "b2"),
    profiles={
        "full": {"batch_size": 16384, "input_size": 2048, "hidden_size": 4096, "output_size": 1024},
        "small": {"batch_size": 64, "input_size": 2048, "hidden_size": 4096, "output_size": 256},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    kernelbench_id=45,
    notes="Both weights stored (out, in) as nn.Linear.weight. Output (batch,). Weights "
    "0.1 N and biases N(0, 1) (public: all 0.02 N, which leaves the output within the "
    "tolerance of a constant).",
    upstream=Upstream(
        file="JAXBench/benchmark/32k_Gemm_Sigmoid_LogSumExp/baseline.py",
        commit="8fa8f3ba7eebac9411a0364a043847bd1d3bde8d",
        date="2026-08-07",
    ),
    deviations=(
        Deviation(
            "inputs",
            "w1 and w2 N(0, 1) x 0.1, b1 and b2 N(0, 1) (public: all N(0, 1) x 0.02).",
            "With the public scales the logits vary by a few hundredths and the logsumexp is "
            "log(output_size) plus a near-constant, so a constant output (or one that ignores x "
            "or the biases) passes.",
        ),
    ),
)
