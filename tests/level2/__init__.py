"""A level-2 workload defined in the tests (JAXBENCH_EXTRA_WORKLOADS), with ten configurations,
and kernels for it: it proves the whole path a later level takes (docs/WORKLOADS.md)."""

import pathlib

HERE = pathlib.Path(__file__).resolve().parent


def kernel_ok() -> str:
    """An honest candidate: correct on all ten configurations."""
    return (HERE / "kernel_ok.py").read_text()


def kernel_wrong_from_c05() -> str:
    """The honest kernel, except that it forgets the gate when the hidden axis is 256 wide: c01-c04
    are correct and c05 (the first 256-wide configuration) is not."""
    ok = kernel_ok()
    wrong = ok.replace(
        "    o_ref[...] = (normed * jax.nn.silu(g_ref[...])).astype(o_ref.dtype)",
        "    gated = normed if o_ref.shape[-1] == 256 else normed * jax.nn.silu(g_ref[...])\n"
        "    o_ref[...] = gated.astype(o_ref.dtype)",
    )
    assert wrong != ok
    return wrong
