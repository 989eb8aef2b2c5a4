"""17p Triangle multiplicative update, outgoing edges (AlphaFold2 Evoformer pair stack; the
triangle-multiplication benchmark of Tokamax)."""

import jax
import jax.numpy as jnp

from .base import Workload
from .upstream import Deviation, Upstream

EPS = 1e-6


def create_inputs(cfg, key):
    keys = jax.random.split(key, 9)
    n, c = cfg["N"], cfg["C"]
    pair_act = jax.random.normal(keys[0], (n, n, c), dtype=jnp.bfloat16)
    # A random pair mask (the public suite's is all ones): about 1 in 5 pairs masked out.
    mask = jax.random.bernoulli(keys[8], cfg["mask_keep"], (n, n, 1)).astype(jnp.bfloat16)

    def weight(k):
        return jax.random.normal(k, (c, c), dtype=jnp.bfloat16) * 0.02

    center_scale = jax.random.normal(keys[5], (c,), dtype=jnp.bfloat16) * 0.1 + 1.0
    return (
        pair_act,
        mask,
        weight(keys[1]),
        weight(keys[2]),
        weight(keys[3]),
        weight(keys[4]),
        center_scale,
        weight(keys[6]),
        weight(keys[7]),
    )


def reference(
    pair_act, mask, left_proj_w, right_proj_w, left_gate_w, right_gate_w, center_scale, out_proj_w, out_gate_w
):
    # bf16 throughout. Gated left/right projections of the masked pair representation.
    act = pair_act * mask
    left = jnp.dot(act, left_proj_w) * jax.nn.sigmoid(jnp.dot(act, left_gate_w))
    right = jnp.dot(act, right_proj_w) * jax.nn.sigmoid(jnp.dot(act, right_gate_w))
    # Outgoing edges: edge (i, j) sums over the third node k of edges (i, k) and (j, k).
    tri = jnp.einsum("ikc,jkc->ijc", left, right)
    # Centre norm: RMS over channels (no mean subtraction, no bias), then the scale.
    rms = jnp.sqrt(jnp.mean(tri * tri, axis=-1, keepdims=True) + EPS)
    tri = tri / rms * center_scale
    # The output gate reads the raw (unmasked) pair representation.
    return jnp.dot(tri, out_proj_w) * jax.nn.sigmoid(jnp.dot(pair_act, out_gate_w))


def cost(cfg):
    n, c = cfg["N"], cfg["C"]
    p = n * n * c
    flops = 6 * 2 * p * c + 2 * n * p + 20 * p  # six projections, the triangle sum, gates/norm
    nbytes = 2 * (2 * p + n * n + 6 * c * c + c)
    return flops, nbytes


WORKLOAD = Workload(
    id="17p",
    slug="17p-triangle-multiplication",
    public_name="17p_Triangle_Multiplication",
    title="Triangle multiplication (outgoing)",
    source="maxtext",
    model="AlphaFold2",
    category="structure",
    description="AlphaFold2's outgoing triangle multiplicative update on an N x N x C pair "
    "representation: sigmoid-gated left and right projections, a sum over the third "
    "node k of left[i,k] * right[j,k], an RMS centre norm, and a gated output "
    "projection.",
    input_names=(
        "pair_act",
        "mask",
        "left_proj_w",
        "right_proj_w",
        "left_gate_w",
        "right_gate_w",
        "center_scale",
        "out_proj_w",
        "out_gate_w",
    ),
    profiles={
        "full": {"N": 1536, "C": 128, "direction": "outgoing", "mask_keep": 0.8},
        # C = 128 as in full (the lane axis); N a multiple of 8.
        "small": {"N": 64, "C": 128, "direction": "outgoing", "mask_keep": 0.8},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="The public mask is all ones, which makes it a no-op; here each pair is kept with "
    "probability 0.8, so a kernel must apply it. The mask multiplies the input of the "
    "four left/right projections only; the output gate uses the raw pair_act. The "
    "centre norm divides by sqrt(mean_c(x^2) + 1e-6) without subtracting the mean. "
    "All steps are bf16 as in the public baseline. (The public CONFIG name says 768; "
    "N is 1536.)",
    upstream=Upstream(
        file="JAXBench/benchmark/17p_Triangle_Multiplication/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "inputs",
            "A random pair mask keeping each pair with probability 0.8 (public: all ones).",
            "An all-ones mask makes the masking a no-op, so a kernel that ignored the mask would pass.",
        ),
    ),
)
