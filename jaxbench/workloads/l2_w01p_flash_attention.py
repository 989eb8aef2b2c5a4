"""Level 2's 1p flash attention: level 1's task (causal MHA at Llama-3.1-70B shapes), timed
against JAX's hand-tuned Pallas TPU flash-attention kernel instead of XLA.

The public level-2 file vendors ``jax.experimental.pallas.ops.tpu.flash_attention`` and calls
it causal, scaled by 1/sqrt(head_dim), with its tuned forward blocks; the kernel is imported
from the pinned JAX here, not copied."""

import math

from .base import PALLAS_TPU, PALLAS_TPU_NOTE, Workload
from .upstream import RUN_CLAMPED, Deviation, Upstream
from .w01p_flash_attention import WORKLOAD as LEVEL_ONE
from .w01p_flash_attention import cost, create_inputs, reference


def pallas_baseline(query, key, value):
    """The public level-2 baseline: JAX's Pallas TPU flash attention, causal, forward blocks
    block_q = block_k_major = 2048 and block_k = 1024 as tuned there (backward blocks 128, unused
    here), each clamped to the sequence so the small profile runs too."""
    # deferred: Pallas loads only when the baseline is exported
    from jax.experimental.pallas.ops.tpu.flash_attention import BlockSizes, flash_attention

    seq, head_dim = query.shape[2], query.shape[3]
    blocks = BlockSizes(
        block_q=min(2048, seq),
        block_k_major=min(2048, seq),
        block_k=min(1024, seq),
        block_b=1,
        block_q_major_dkv=128,
        block_k_major_dkv=128,
        block_k_dkv=128,
        block_q_dkv=128,
        block_k_major_dq=128,
        block_k_dq=128,
        block_q_dq=128,
    )
    return flash_attention(query, key, value, causal=True, sm_scale=1.0 / math.sqrt(head_dim), block_sizes=blocks)


WORKLOAD = Workload(
    id="l2-1p",
    slug="l2-1p-flash-attention",
    public_name="1p_Flash_Attention",
    title="Flash attention (Pallas baseline)",
    source="maxtext",
    model=LEVEL_ONE.model,
    category=LEVEL_ONE.category,
    description="Level 1's 1p (causal multi-head attention, 64 heads of 128, 4096 tokens), timed "
    "against JAX's hand-tuned Pallas TPU flash-attention kernel with the public suite's block "
    "sizes: a speedup here beats the tuned kernel, not XLA.",
    input_names=LEVEL_ONE.input_names,
    profiles=LEVEL_ONE.profiles,
    create_inputs_fn=create_inputs,
    reference=reference,
    cost_fn=cost,
    pallas_baseline=pallas_baseline,
    platforms=PALLAS_TPU,
    platform_note=PALLAS_TPU_NOTE,
    level=2,
    version=1,
    notes=LEVEL_ONE.notes,
    upstream=Upstream(
        file="JAXBench/benchmark/level2/1p_Flash_Attention/baseline.py",
        commit="b921505eeb0892c02e35dc85e41c483e11ad738b",
        date="",
        conformance=RUN_CLAMPED,
    ),
    deviations=(
        Deviation(
            "tolerance",
            "atol = rtol = 1e-2 (level 1's), not the public level-2 file's 2e-3",
            "upstream measures 2e-3 against the baseline kernel's own output; here every output is "
            "judged against the exact answer with XLA's own error as the allowance, and the tuned "
            "kernel itself (bf16 probabilities before P.V) misses that rule at 2e-3 (63 of 524,288 "
            "elements, worst 1.49x its allowance at the small profile) while it passes at 1e-2",
        ),
        Deviation(
            "small-profile",
            "the small profile (sequence 512) clamps the tuned forward blocks to the sequence: "
            "block_q = block_k_major = block_k = 512",
            "the public blocks (2048, 2048, 1024) are longer than the small sequence; the full "
            "profile uses them unchanged",
        ),
    ),
)
