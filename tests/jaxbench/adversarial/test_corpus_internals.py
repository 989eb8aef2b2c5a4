"""The corpus attacks the child script's own internals (its Job object and module functions,
found at run time as ``__main__``). An attack that names an attribute the child no longer has
fails with an import error instead of testing the defence, so a refactor of the child script
must update the attacks too: this fast check says so long before the slow corpus run does."""

import ast
import functools

import pytest

from .corpus import ROOT, files, source

CHILD = ROOT / "jaxbench" / "sandbox" / "child_main.py"
# how the attacks name the child's module and its Job object
MODULE_NAMES = {"_MAIN", "main"}
JOB_NAMES = {"_JOB", "job"}


@functools.cache
def _child_surface():
    """(module functions and their arguments, module-level names, Job attributes)."""
    tree = ast.parse(CHILD.read_text())
    functions, names, job = {}, set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node.args
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ClassDef) and node.name == "Job":
            for sub in ast.walk(node):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub in node.body:
                    job.add(sub.name)
                elif (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == "self"
                    and isinstance(sub.ctx, ast.Store)
                ):
                    job.add(sub.attr)
    return functions, names | set(functions), job


def _positional_range(args: ast.arguments):
    params = args.posonlyargs + args.args
    most = None if args.vararg else len(params)
    return len(params) - len(args.defaults), most


def _is_job(node):
    if isinstance(node, ast.Name):
        return node.id in JOB_NAMES
    # type(_JOB).timing
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and _is_job(node.args[0])
    )


def _is_module(node):
    if isinstance(node, ast.Name):
        return node.id in MODULE_NAMES
    # sys.modules["__main__"]
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "__main__"


def _mismatches(text, functions, module_names, job_attrs):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the syntax-error candidate names nothing
    own_job = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and _is_job(n.value) and isinstance(n.ctx, ast.Store)
    }
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if _is_module(node.value) and not node.attr.startswith("__") and node.attr not in module_names:
                wrong.append(f"line {node.lineno}: the child script has no module-level '{node.attr}'")
            if _is_job(node.value) and node.attr not in job_attrs | own_job:
                wrong.append(f"line {node.lineno}: the child's Job has no attribute '{node.attr}'")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _is_module(node.func.value)
            and node.func.attr in functions
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            least, most = _positional_range(functions[node.func.attr])
            if len(node.args) + len(node.keywords) < least or (most is not None and len(node.args) > most):
                wrong.append(
                    f"line {node.lineno}: {node.func.attr}() takes {least}..{most} positional "
                    f"arguments in the child script, the attack passes {len(node.args)}"
                )
    return wrong


FILES = files()


def test_the_surface_is_read():
    functions, names, job = _child_surface()
    assert {"load_set", "write_outputs", "input_specs"} <= set(functions)
    assert "OPTS" in names
    assert {"spec", "manifest", "compiled", "named", "timing", "baseline"} <= job


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_attacks_name_what_the_child_has(path):
    functions, names, job = _child_surface()
    assert not _mismatches(source(path), functions, names, job)


def test_a_stale_attack_is_caught():
    stale = (
        "import sys\n_MAIN = sys.modules['__main__']\n_JOB = object()\n"
        "x = _JOB.in_root\ny = _MAIN.load_set(1, 2, 3)\nz = _MAIN.gone\n"
    )
    functions, names, job = _child_surface()
    wrong = _mismatches(stale, functions, names, job)
    assert any("'in_root'" in w for w in wrong)
    assert any("load_set()" in w for w in wrong)
    assert any("'gone'" in w for w in wrong)
