"""Starter candidate files: the baseline, wrapped in the candidate interface, self-contained."""

from __future__ import annotations

import ast
import importlib
import inspect
import pprint

_SKIP_FUNCS = {"create_inputs", "cost", "normal_bf16"}  # input generation is not the starter's


def _module_parts(module, seen: set[str]) -> tuple[list[str], list[str]]:
    """(import lines, definitions) of a workload module, following its relative helper imports."""
    src = inspect.getsource(module)
    tree = ast.parse(src)
    imports, defs = [], []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            # the Workload declaration and its upstream metadata are not the computation
            if node.module in (None, "base", "upstream"):
                continue
            helper = importlib.import_module("." * node.level + node.module, module.__package__)
            if helper.__name__ not in seen:
                seen.add(helper.__name__)
                h_imports, h_defs = _module_parts(helper, seen)
                imports += h_imports
                defs += h_defs
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.get_source_segment(src, node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in _SKIP_FUNCS:
            defs.append(ast.get_source_segment(src, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "WORKLOAD" not in names:
                defs.append(ast.get_source_segment(src, node))
    return imports, defs


def starter_source(wl, profile: str = "full") -> str:
    module = inspect.getmodule(wl.reference)
    imports, defs = _module_parts(module, {module.__name__})
    cases = wl.cases(profile)
    static = wl.static_params(cases[0])
    args = ", ".join(wl.input_names)
    call_kwargs = ", ".join(f"{k}=CONFIG[{k!r}]" for k in static)
    specs = wl.input_specs(cases[0])
    shape_lines = "\n".join(f"    {n}: {tuple(s.shape)} {s.dtype}" for n, s in zip(wl.input_names, specs))
    if len(cases) > 1:  # one kernel for every configuration: sizes must come from the shapes
        shape_lines = f"  ({len(cases)} configurations, each checked and timed; the first, {cases[0]}:)\n" + shape_lines
    out = wl.output_spec(cases[0])
    seen, uniq_imports = set(), []
    for line in imports:
        if line not in seen:
            seen.add(line)
            uniq_imports.append(line)
    ref_name = wl.reference.__name__
    return "\n".join(
        [
            f'"""Starter candidate for JAXBench {wl.id} {wl.title} ({wl.slug}).',
            "",
            "Replace the body of workload() with a Pallas kernel (jax.experimental.pallas) that returns",
            "the same output shape and dtype. Read sizes from the input shapes: the harness sets CONFIG",
            "to the profile's static values before calling, and runs the small profile on CPU through",
            "JAX's generic Pallas interpreter. Inputs at the full profile:",
            shape_lines,
            f"Output: {getattr(out, 'shape', out)} {getattr(out, 'dtype', '')}",
            f"Tolerance: atol={wl.atol}, rtol={wl.rtol}.",
            '"""',
            *uniq_imports,
            "",
            f"CONFIG = {pprint.pformat(static, sort_dicts=False)}",
            "",
            "",
            "# --- the XLA baseline, for reference (the harness ignores it) ---",
            "",
            "\n\n\n".join(defs),
            "",
            "",
            f"def workload({args}):",
            '    """The candidate: replace this with your Pallas kernel."""',
            f"    return {ref_name}({args}{', ' if call_kwargs else ''}{call_kwargs})",
            "",
        ]
    )
