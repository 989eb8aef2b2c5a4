"""Expert (hand-tuned) candidates for the 8 expert workloads.

Each file here is an ordinary candidate (``workload(*inputs)``) that wraps a hand-tuned Pallas
TPU kernel: Tokamax's Mosaic TPU ops where Tokamax has one that fits, otherwise JAX's own
kernels under ``jax.experimental.pallas.ops.tpu``. Every file declares, as module-level
literals:

* ``IMPLEMENTATION``: which op and backend runs;
* ``EXPERT_CONFIG``: its tunable configuration (block sizes ...), read at call time;
* ``SWEEP``: the configurations to try at the full profile (valid TPU block sizes);
* ``SWEEP_SMALL``: a subset that is valid, and distinct, at the small profile (CPU runs).

A sweep point is just another candidate file: ``configured_source(workload_id, config)``
returns the expert's source with ``EXPERT_CONFIG`` set to the defaults updated by ``config``,
so the harness evaluates it like any upload. Everything here is pure text processing: no JAX
import, nothing is executed.

Code several experts share lives once in a ``_name.py`` file here; an expert takes it with a
one-line ``from ._name import ...`` that ``source`` replaces by that file's text
(``jaxbench.self_contained``), so the candidate stays one self-contained file. Where a
name is assigned twice (an expert's own ``SWEEP`` after the shared one) the later one is in
effect, here as in Python.
"""

from __future__ import annotations

import ast
import json
import pathlib

from jaxbench.self_contained import inline_shared

_DIR = pathlib.Path(__file__).resolve().parent

EXPERTS = {
    "1p": "1p-flash-attention.py",
    "2p": "2p-gqa-attention.py",
    "3p": "3p-mla-attention.py",
    "4p": "4p-sparse-attention.py",
    "6p": "6p-paged-attention.py",
    "7p": "7p-ragged-paged-attention.py",
    "8p": "8p-gemm.py",
    "11p": "11p-megablox-gmm.py",
}

_CONFIG_NAME = "EXPERT_CONFIG"
_LITERAL_TYPES = (bool, int, float, str, type(None))


def path(workload_id: str) -> pathlib.Path:
    try:
        return _DIR / EXPERTS[workload_id]
    except KeyError:
        raise KeyError(f"no expert for workload {workload_id!r}; have {sorted(EXPERTS)}") from None


def source(workload_id: str) -> str:
    """The expert candidate's source, with its default configuration and its shared code in
    place."""
    return inline_shared(path(workload_id).read_text(), _DIR, "jaxbench/kernels/experts")


def _assignment(tree: ast.Module, name: str) -> ast.Assign:
    """The module-level assignment to ``name`` in effect: the last one."""
    for node in reversed(tree.body):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            return node
    raise ValueError(f"no module-level {name} assignment")


def _literal(text: str, name: str):
    node = _assignment(ast.parse(text), name)
    return ast.literal_eval(node.value)


def default_config(workload_id: str) -> dict:
    return dict(_literal(source(workload_id), _CONFIG_NAME))


def implementation(workload_id: str) -> str:
    return _literal(source(workload_id), "IMPLEMENTATION")


def sweep(workload_id: str, profile: str = "full") -> list[dict]:
    """The sweep's configurations (partial dicts over the default) for ``profile``."""
    name = {"full": "SWEEP", "small": "SWEEP_SMALL"}.get(profile)
    if name is None:
        raise KeyError(f"unknown profile {profile!r}")
    return [dict(c) for c in _literal(source(workload_id), name)]


def _render(config: dict) -> str:
    def lit(value):
        return json.dumps(value) if isinstance(value, str) else repr(value)

    lines = [f"{_CONFIG_NAME} = {{  # set by jaxbench.kernels.experts.configured_source"]
    lines += [f"    {lit(key)}: {lit(value)}," for key, value in config.items()]
    lines.append("}")
    return "\n".join(lines)


def configured_source(workload_id: str, config: dict) -> str:
    """The expert's candidate source with ``EXPERT_CONFIG`` = defaults updated by ``config``.

    Unknown keys and non-literal values raise ``ValueError``; an empty ``config`` gives the
    default configuration (the file's text with the dict rewritten)."""
    text = source(workload_id)
    node = _assignment(ast.parse(text), _CONFIG_NAME)
    defaults = ast.literal_eval(node.value)
    unknown = sorted(set(config) - set(defaults))
    if unknown:
        raise ValueError(f"{workload_id}: unknown {_CONFIG_NAME} keys {unknown}; known: {sorted(defaults)}")
    for key, value in config.items():
        if not isinstance(value, _LITERAL_TYPES):
            raise ValueError(f"{workload_id}: {key}={value!r} is not a literal value")
    merged = {**defaults, **config}
    lines = text.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno  # the assignment's whole lines
    rendered = _render(merged) + "\n"
    out = "".join(lines[:start]) + rendered + "".join(lines[end:])
    assert _literal(out, _CONFIG_NAME) == merged
    return out
