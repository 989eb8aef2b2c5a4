"""10p Sparse mixture of experts, top-2 routing (Mixtral-8x7B, MaxText moe.py), evaluated
densely as in the public baseline: every expert runs on every token and the routing weights
select two of them."""

import jax
import jax.numpy as jnp
from jax import lax

from .base import Workload
from .upstream import Deviation, Upstream


def create_inputs(cfg, key):
    kx, kr, kg, ku, kd = jax.random.split(key, 5)
    b, s = cfg["batch"], cfg["seq_len"]
    e, m, n = cfg["emb_dim"], cfg["mlp_dim"], cfg["num_experts"]
    w = cfg["weight_scale"]
    x = jax.random.normal(kx, (b, s, e), dtype=jnp.bfloat16)
    router = jax.random.normal(kr, (e, n), dtype=jnp.bfloat16) * w
    gate = jax.random.normal(kg, (n, e, m), dtype=jnp.bfloat16) * w
    up = jax.random.normal(ku, (n, e, m), dtype=jnp.bfloat16) * w
    down = jax.random.normal(kd, (n, m, e), dtype=jnp.bfloat16) * w
    return x, router, gate, up, down


def reference(x, router_weights, expert_gate_kernels, expert_up_kernels, expert_down_kernels, *, num_experts_per_tok):
    n = router_weights.shape[-1]
    # Routing on the bf16 logits (near-ties are decided on the rounded values); ties go to the
    # lower expert index; softmax over the chosen logits only.
    logits = jnp.dot(x, router_weights)
    top_vals, top_idx = lax.top_k(logits, num_experts_per_tok)
    probs = jax.nn.softmax(top_vals, axis=-1)
    # Dense evaluation: every expert on every token, (B, S, N, E) bf16.
    h = jax.nn.silu(jnp.einsum("bse,nem->bsnm", x, expert_gate_kernels))
    h = h * jnp.einsum("bse,nem->bsnm", x, expert_up_kernels)
    y = jnp.einsum("bsnm,nme->bsne", h, expert_down_kernels)
    # Per-expert weight (f32): the router probability of a chosen expert, 0 otherwise. The f32
    # weights promote the combination, so the output is f32.
    choice = jax.nn.one_hot(top_idx, n, dtype=jnp.float32)
    weights = jnp.sum(choice * probs[..., None], axis=-2)
    return jnp.einsum("bsne,bsn->bse", y, weights)


def cost(cfg):
    # The work a sparse implementation must do: routing plus top-k experts per token (the
    # dense XLA baseline does num_experts / num_experts_per_tok times more expert work).
    t = cfg["batch"] * cfg["seq_len"]
    e, m, n = cfg["emb_dim"], cfg["mlp_dim"], cfg["num_experts"]
    k = cfg["num_experts_per_tok"]
    flops = 2 * t * e * n + t * k * (3 * 2 * e * m + 6 * m + 2 * e)
    nbytes = 2 * t * e + 2 * e * n + 2 * 3 * n * e * m + 4 * t * e
    return flops, nbytes


WORKLOAD = Workload(
    id="10p",
    slug="10p-sparse-moe",
    public_name="10p_Sparse_MoE",
    title="Sparse mixture of experts (top-2)",
    source="maxtext",
    model="Mixtral-8x7B",
    category="moe",
    description="Mixtral's MoE feed-forward layer: a linear router picks the top-2 of 8 "
    "SwiGLU experts per token and mixes their outputs with softmax weights.",
    input_names=("x", "router_weights", "expert_gate_kernels", "expert_up_kernels", "expert_down_kernels"),
    profiles={
        "full": {
            "batch": 2,
            "seq_len": 4096,
            "emb_dim": 4096,
            "mlp_dim": 14336,
            "num_experts": 8,
            "num_experts_per_tok": 2,
            "weight_scale": 0.02,
        },
        # 8 experts, top-2 and mlp_dim / emb_dim = 3.5 as in full. Weights x 0.04 put the
        # output's standard deviation at about 0.2 (see notes).
        "small": {
            "batch": 2,
            "seq_len": 64,
            "emb_dim": 256,
            "mlp_dim": 896,
            "num_experts": 8,
            "num_experts_per_tok": 2,
            "weight_scale": 0.04,
        },
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="The public baseline evaluates all 8 experts densely and masks with the routing "
    "weights; a kernel may compute only the two chosen experts. The output is float32 "
    "(the float32 one-hot promotes the combination). Routing is precision sensitive: "
    "compute the router logits as a bf16 matmul result and take the top-2 of those "
    "values (ties: lower expert index). Inputs as in the public suite: x ~ N(0,1), "
    "weights N(0,1) x 0.02 at the full size (output deviation about 1.5, where bf16 "
    "rounding differences between correct implementations come close to the "
    "tolerance); the small profile uses weights x 0.04 (output deviation about 0.2), "
    "large enough to be far above the tolerance and small enough that an all-float32 "
    "expert computation agrees. The cost counts the sparse work (routing and two "
    "experts per token).",
    upstream=Upstream(
        file="JAXBench/benchmark/10p_Sparse_MoE/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "small-profile",
            "Weights N(0, 1) x 0.04 at the small profile (public: 0.02).",
            "Output deviation about 0.2: large enough to be far above the tolerance and small "
            "enough that an all-float32 expert computation agrees with the bf16 baseline.",
        ),
    ),
)
