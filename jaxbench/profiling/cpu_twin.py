"""The cpu twin of a judged TPU program (TRUST.md 1: one trace, one artifact).

On the cpu target the export child traces the candidate once and writes two kinds of data: the
**judged program**, that one trace lowered for a TPU (each ``pallas_call`` a Mosaic custom call
numbered ``jaxbench.kernel_site = i``), and, for each numbered site, that kernel alone exported
through JAX's generic Pallas interpreter. This module, run by the timer child (a process that
never imported candidate code; it is written into the timer's input directory and loaded by
path like ``hlo_cost.py``), builds the program the timer checks and times: the judged module
itself, in which each numbered custom call is replaced by a call of its kernel's interpreted
function. Every operation outside the kernels is therefore the judged program's own operation,
by construction, so the Pallas share counted on the judged program is the share of the program
that is timed. A custom call without a site number (a kernel that did not come from a
``pallas_call``) cannot be interpreted: the twin refuses it.

Imports only the standard library and JAX (it runs inside the sandbox)."""

from __future__ import annotations

import dataclasses

SITE_ATTR = "jaxbench.kernel_site"
TPU_KERNEL_CALL = "tpu_custom_call"


class TwinError(ValueError):
    """The judged program and its kernels do not make a cpu program: ``category`` says why."""

    def __init__(self, category: str, message: str):
        super().__init__(message)
        self.category = category


def _custom_calls(op, found):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name == "stablehlo.custom_call":
                    found.append(inner.operation)
                _custom_calls(inner.operation, found)
    return found


def _signature(func_op):
    from jax._src.lib.mlir import ir  # deferred: JAX loads only in the timer child, where this runs

    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    return [str(t) for t in ftype.inputs], [str(t) for t in ftype.results]


def cpu_twin(judged, kernels: list):
    """The program the cpu target runs for ``judged`` (a deserialized TPU ``Exported``):
    ``kernels[i]`` (deserialized cpu ``Exported``s) replaces the custom call numbered ``i``.
    Raises :class:`TwinError` when they do not fit together."""
    # deferred: JAX loads only in the timer child, where this runs (internal APIs of the pinned JAX)
    from jax._src.export import _export as jexport  # deferred: as above
    from jax._src.interpreters import mlir  # deferred: as above
    from jax._src.lib.mlir import ir  # deferred: as above
    from jax._src.lib.mlir.dialects import func as func_dialect  # deferred: as above

    if tuple(judged.platforms) != ("tpu",):
        raise TwinError("artifact_platform", f"the judged program is for {list(judged.platforms)}, not a TPU")
    for i, k in enumerate(kernels):
        if tuple(k.platforms) != ("cpu",) or k.ordered_effects or k.nr_devices != 1:
            raise TwinError("artifact_mismatch", f"kernel {i} is not a one-device cpu program without effects")
    with mlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(judged.mlir_module())
        symtab = ir.SymbolTable(module.operation)
        names = []
        for i, k in enumerate(kernels):
            names.append(
                mlir.merge_mlir_modules(module, f"jaxbench_kernel_{i}", ir.Module.parse(k.mlir_module()), symtab)
            )
        used = set()
        for call in _custom_calls(module.operation, []):
            target = ir.StringAttr(call.attributes["call_target_name"]).value
            if SITE_ATTR not in call.attributes:
                if target == TPU_KERNEL_CALL:
                    raise TwinError(
                        "cpu_unsupported",
                        "a TPU kernel that is not a pallas_call cannot be interpreted on the cpu target",
                    )
                continue  # any other custom call stays: the verifier judges it
            i = ir.IntegerAttr(call.attributes[SITE_ATTR]).value
            if target != TPU_KERNEL_CALL or not 0 <= i < len(kernels) or i in used:
                raise TwinError("artifact_mismatch", f"kernel site {i} ({target}) has no kernel of its own")
            used.add(i)
            fn = symtab[names[i]]
            ins, outs = _signature(fn)
            if ins != [str(v.type) for v in call.operands] or outs != [str(r.type) for r in call.results]:
                raise TwinError("artifact_mismatch", f"kernel {i}'s signature differs from its site's")
            with ir.InsertionPoint(call):
                new = func_dialect.CallOp(
                    [r.type for r in call.results], ir.FlatSymbolRefAttr.get(names[i]), list(call.operands)
                )
            for old_result, new_result in zip(call.results, new.results):
                old_result.replace_all_uses_with(new_result)
            call.erase()
        if len(used) != len(kernels):
            raise TwinError("artifact_mismatch", f"{len(kernels) - len(used)} kernel(s) belong to no site")
        module.operation.verify()
        data = jexport._module_to_bytecode(module)
    return dataclasses.replace(judged, platforms=("cpu",), mlir_module_serialized=data)
