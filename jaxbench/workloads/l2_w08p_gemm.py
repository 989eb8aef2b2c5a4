"""Level 2's 8p GEMM: level 1's task (the Llama-3.1-70B FFN up-projection), timed against the
hand-tuned Pallas matmul instead of XLA.

The public suite's level 2 turned each level-1 task's tuned Pallas kernel into its baseline;
for 8p that is JAX's own TPU matmul kernel (``jax.experimental.pallas.ops.tpu.matmul``) with
the tuned block sizes of the public file. It is imported from JAX here, not copied: the kernel
timed is the one the pinned JAX ships, which the public file vendors unchanged."""

from .base import PALLAS_TPU, PALLAS_TPU_NOTE, Workload
from .upstream import RUN_CLAMPED, Deviation, Upstream
from .w08p_gemm import WORKLOAD as LEVEL_ONE
from .w08p_gemm import cost, create_inputs, reference


def pallas_baseline(a, b):
    """The public level-2 baseline: JAX's Pallas TPU matmul, blocks (1024, 2048) x 1024 as tuned
    there, each clamped to its dimension so the small profile (one block) runs too."""
    from jax.experimental.pallas.ops.tpu.matmul import matmul  # deferred: Pallas loads only when timed

    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk = min(1024, m), min(2048, n), min(1024, k)
    if m % bm or n % bn or k % bk:
        # the kernel's grid floors each dimension by its block: a remainder would be dropped
        raise ValueError(f"blocks ({bm}, {bn}) x {bk} do not divide ({m}, {k}) x ({k}, {n})")
    return matmul(a, b, block_shape=(bm, bn), block_k=bk)


WORKLOAD = Workload(
    id="l2-8p",
    slug="l2-8p-gemm",
    public_name="8p_GEMM",
    title="GEMM (Pallas baseline)",
    source="maxtext",
    model=LEVEL_ONE.model,
    category=LEVEL_ONE.category,
    description="Level 1's 8p (dense bf16 C = A @ B at the Llama-3.1-70B feed-forward shape), "
    "timed against JAX's hand-tuned Pallas TPU matmul with the public suite's block sizes: "
    "a speedup here beats the tuned kernel, not XLA.",
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
    atol=1e-3,
    rtol=1e-2,
    tolerance_reason="the public level-2 file's CONFIG: atol 1e-3, rtol 1e-2 (level 1's 8p: 1e-2, 1e-2)",
    notes=LEVEL_ONE.notes,
    upstream=Upstream(
        file="JAXBench/benchmark/level2/8p_GEMM/baseline.py",
        commit="8769f9f49c3b407c436aa06029b3f434e99ecdb4",
        date="",
        conformance=RUN_CLAMPED,
    ),
    deviations=(
        Deviation(
            "small-profile",
            "the small profile (512 x 512 times 512 x 1792) clamps the tuned blocks to one block "
            "per dimension: (512, 1792) x 512",
            "the public blocks (1024, 2048) x 1024 are larger than the small matrices; the full "
            "profile uses them unchanged",
        ),
    ),
)
