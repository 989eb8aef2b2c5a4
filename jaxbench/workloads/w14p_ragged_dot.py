"""14p Ragged dot / grouped matmul (Mixtral-8x7B expert layer; the ragged-dot benchmark of
Tokamax), in the public suite's padded layout: each of the 8 groups owns a fixed block of
rows of x."""

import jax
import jax.numpy as jnp

from .base import Workload
from .upstream import Deviation, Upstream


def ragged_row_counts(key, num_groups, capacity):
    """Random per-group counts of valid rows in [capacity/2, capacity], summing to exactly
    3/4 of all rows (random pairs of groups trade rows around the mean 3*capacity/4)."""
    if capacity % 4 or num_groups % 2:
        raise ValueError("need capacity % 4 == 0 and an even group count")
    mean, spread = 3 * capacity // 4, capacity // 4
    kp, kt = jax.random.split(key)
    perm = jax.random.permutation(kp, num_groups)
    trade = jax.random.randint(kt, (num_groups // 2,), -spread, spread + 1, dtype=jnp.int32)
    delta = jnp.zeros((num_groups,), jnp.int32)
    delta = delta.at[perm[0::2]].set(trade).at[perm[1::2]].set(-trade)
    return mean + delta


def create_inputs(cfg, key):
    kx, kw, kc = jax.random.split(key, 3)
    g, m, k, n = cfg["num_groups"], cfg["M"], cfg["K"], cfg["N"]
    cap = m // g
    x = jax.random.normal(kx, (g, cap, k), dtype=jnp.bfloat16)
    # Ragged groups inside the fixed layout: rows past a group's count are padding (zeros),
    # as in an MoE dispatch buffer.
    counts = ragged_row_counts(kc, g, cap)
    valid = jnp.arange(cap)[None, :, None] < counts[:, None, None]
    x = jnp.where(valid, x, jnp.zeros_like(x))
    weights = jax.random.normal(kw, (g, k, n), dtype=jnp.bfloat16) * 0.02
    return x, weights


def reference(x, weights):
    return jnp.einsum("gmk,gkn->gmn", x, weights)


def cost(cfg):
    g, m, k, n = cfg["num_groups"], cfg["M"], cfg["K"], cfg["N"]
    # 3/4 of the rows hold tokens (see create_inputs); a ragged-aware kernel may skip the rest.
    rows = 3 * m // 4
    return 2 * rows * k * n, 2 * (m * k + g * k * n + m * n)


WORKLOAD = Workload(
    id="14p",
    slug="14p-ragged-dot",
    public_name="14p_Ragged_Dot",
    title="Ragged dot (grouped matmul)",
    source="maxtext",
    model="Mixtral-8x7B",
    category="moe",
    description="Grouped matmul for 8 experts: each group's block of token rows multiplies its "
    "own expert weight matrix; the groups fill their blocks unevenly.",
    input_names=("x", "weights"),
    profiles={
        "full": {"num_groups": 8, "M": 8192, "K": 4096, "N": 14336},
        # 8 groups; N / K = 3.5 as in full.
        "small": {"num_groups": 8, "M": 1024, "K": 256, "N": 896},
    },
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    version=1,
    notes="The public baseline is a batched einsum over x (G, M/G, K) and weights (G, K, N); "
    "group sizes are not an input (the docstring mentions them, but create_inputs does "
    "not return them), so the 8 groups are equal and nothing ragged is left. The "
    "computation and the two-input signature are kept; the inputs carry the raggedness "
    "instead: in each group a random number of rows (1/2 to all of the block, 3/4 of "
    "all rows in total) holds tokens and the rest are zero padding, like an MoE "
    "dispatch buffer. The cost counts the valid rows only.",
    upstream=Upstream(
        file="JAXBench/benchmark/14p_Ragged_Dot/baseline.py",
        commit="81be73a3ca33418f8e2a774d06a90298c5973917",
        date="2026-05-05",
    ),
    deviations=(
        Deviation(
            "inputs",
            "In each of the 8 groups a random number of rows (1/2 to all of the block, 3/4 of all "
            "rows in total) holds tokens and the rest are zero padding (public: every row a "
            "token).",
            "The public groups are equal and group sizes are not an input, so nothing ragged is "
            "left; the padding carries the raggedness within the public two-input signature, like "
            "an MoE dispatch buffer.",
        ),
    ),
)
