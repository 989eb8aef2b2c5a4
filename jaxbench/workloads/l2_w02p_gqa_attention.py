"""Level 2's 2p grouped-query attention: level 1's task (causal GQA at Llama-3.1-405B shapes,
layout batch, seq, heads, head_dim), timed against JAX's hand-tuned Pallas TPU splash-attention
kernel instead of XLA, as the public level-2 file calls it: the inputs transposed to heads-major,
the query scaled by 1/sqrt(head_dim), the output transposed back."""

from ._splash import causal_gqa
from .base import PALLAS_TPU, PALLAS_TPU_NOTE, Workload
from .upstream import RUN_CLAMPED, Deviation, Upstream
from .w02p_gqa_attention import WORKLOAD as LEVEL_ONE
from .w02p_gqa_attention import cost, create_inputs, reference


def pallas_baseline(query, key, value):
    """The public level-2 baseline: splash attention (``_splash.causal_gqa``) on heads-major
    copies, the query scaled by 1/sqrt(head_dim) first."""
    q, k, v = (x.transpose(0, 2, 1, 3) for x in (query, key, value))
    return causal_gqa(q * (q.shape[-1] ** -0.5), k, v).transpose(0, 2, 1, 3)


WORKLOAD = Workload(
    id="l2-2p",
    slug="l2-2p-gqa-attention",
    public_name="2p_GQA_Attention",
    title="Grouped-query attention (Pallas baseline)",
    source="maxtext",
    model=LEVEL_ONE.model,
    category=LEVEL_ONE.category,
    description="Level 1's 2p (causal grouped-query attention, 128 query heads over 8 KV heads, 4096 "
    "tokens), timed against JAX's hand-tuned Pallas TPU splash-attention kernel with the public "
    "suite's block sizes: a speedup here beats the tuned kernel, not XLA.",
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
        file="JAXBench/benchmark/level2/2p_GQA_Attention/baseline.py",
        commit="aba9c253ea7131dd7d038d199f598d8fdb6f365b",
        date="",
        conformance=RUN_CLAMPED,
    ),
    deviations=(
        *LEVEL_ONE.deviations,
        Deviation(
            "small-profile",
            "the small profile clamps the tuned blocks (2048, 2048, 1024) to its sequence",
            "the public blocks are longer than the small sequence; the full profile uses them unchanged",
        ),
    ),
)
