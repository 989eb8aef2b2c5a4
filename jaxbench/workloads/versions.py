"""Workload versions: what defines a workload, hashed, and the human version number bumped for it.

A workload is defined by its inputs recipe per profile (``create_inputs`` and the helpers it
calls, the profile configurations, which carry the static parameters), its reference computation
(``reference`` and its helpers), the exact computation the harness derives from it
(``Workload.exact``/``baseline``/``static_params``/``create_inputs``) and its tolerance. Each
piece of source is parsed and unparsed (comments, docstrings, blank lines and formatting do not
count), so only a change of meaning or of numbers moves the hash.

Each module declares ``version=`` in its ``Workload(...)``; the hash that version was declared
for is recorded here, in :data:`RECORDED`, and nowhere else. ``tests/jaxbench/workloads/
test_versions.py`` fails, naming the workload, when a hash moves without the bump. To bump:
raise ``version=`` in the module by one and record ``(new version, new hash)`` below (the
failing test prints both). Results of earlier versions are kept, ranked apart, and can be
re-scored (``manage.py rescore``).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import pkgutil
import textwrap
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Workload

HASH_LENGTH = 16

# {workload id: (version, content hash that version was declared for)}
RECORDED: dict[str, tuple[int, str]] = {
    '1p': (1, '49107d991f17d28b'),
    '2p': (1, '381ea5831ff5be34'),
    '3p': (1, '23ad0d9dbb535332'),
    '4p': (1, '021b1dab460ec5ea'),
    '5p': (1, '0b6e4aa0921b351c'),
    '6p': (1, '371df49e36845a9f'),
    '7p': (1, 'ae81746ae81156d4'),
    '8p': (1, '63f02892d15bdfd7'),
    '9p': (1, '190aabc8275ab746'),
    '10p': (1, '6a7c07f4623df722'),
    '11p': (1, '46460e7e4cfa95a1'),
    '12p': (1, 'e2ced33d175a42b1'),
    '13p': (1, '725596505a5fed0a'),
    '14p': (1, '871f013052d4c19b'),
    '15p': (1, '0a68fd192d3defd0'),
    '16p': (1, 'a2d23dac20c54741'),
    '17p': (1, '0e6fd97a02bdaa44'),
    '18k': (1, 'd90cf019ad0df7e9'),
    '19k': (1, 'bdae604a5c81d579'),
    '20k': (1, 'ce423818103208d0'),
    '21k': (1, '8cf035936d35efe7'),
    '22k': (1, '95c3d248dff4792d'),
    '23k': (1, '3cedb2217fc251d8'),
    '24k': (1, '337a424d9261ac36'),
    '25k': (1, 'd1fd736adb6701c8'),
    '26k': (1, 'b6d678463e389c10'),
    '27k': (1, '4c4424670fff17e8'),
    '28k': (1, 'd785ce095d904ace'),
    '29k': (1, '8c468b39085dc95b'),
    '30k': (1, '1a36195785f51c91'),
    '31k': (1, 'e9dfd96782dd2d15'),
    '32k': (1, '28137610b4a79b82'),
    '33k': (1, '0868334add6e72f6'),
    '34k': (1, '9b3472a4cffc5073'),
    '35k': (1, 'e9b9d3d6115cf482'),
    '36k': (1, '9d219394ddd34a93'),
    '37k': (1, '3d888ded745d1983'),
    '38k': (1, 'b9840b2ec506fce6'),
    '39k': (1, '75567ed2e011da8c'),
    '40k': (1, 'ebc9c60842e2f47d'),
    '41k': (1, '288a0a58754b6db4'),
    '42k': (1, '999fbefe356a8b42'),
    '43k': (1, '62e7a47421aa714c'),
    '44k': (1, 'b4df6006b1e0c3c9'),
    '45k': (1, 'f4233ac774981a2a'),
    '46k': (1, 'd632395622bf07fe'),
    '47k': (1, 'f50f71f523904c49'),
    '48k': (1, '7929f2089419afac'),
    '49k': (1, 'c4b029b10b4a35cb'),
    '50k': (1, '9df63e84fd72f926'),
    # level 2
    'l2-1p': (1, '2f86501ac58cd477'),
    'l2-2p': (1, '7486ca5ad9a7c527'),
    'l2-4p': (1, '28eb173443d719ff'),
    'l2-6p': (1, '8e4f3ec0ba61d3d6'),
    'l2-7p': (1, '8a7f44f362993c90'),
    'l2-8p': (1, 'db7f4c826ba29eea'),
    'l2-11p': (1, 'e867f02e9db77443'),
    '64p': (1, '5c95ef4415dfba10'),
}


def _normalised_source(fn) -> str:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _names(code: types.CodeType) -> set[str]:
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


def _with_helpers(fn) -> list:
    """``fn`` and every function of the workloads package it calls by a global name, transitively
    (``normal_bf16``, a module's own helpers), in a stable order."""
    seen: dict[str, object] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        key = f"{f.__module__}.{f.__qualname__}"
        if key in seen:
            continue
        seen[key] = f
        for name in sorted(_names(f.__code__)):
            g = f.__globals__.get(name)
            # the workloads package's helpers, and the workload module's own (also one that lives
            # outside the package, such as a workload defined in the tests)
            if isinstance(g, types.FunctionType) and (
                g.__module__.startswith(__package__ or "jaxbench.workloads") or g.__module__ == fn.__module__
            ):
                todo.append(g)
    return [seen[k] for k in sorted(seen)]


def content_parts(wl: Workload) -> dict[str, object]:
    """The pieces the hash is taken over, readable (tests and the bump message use them)."""
    from .base import Workload as _W  # deferred: base imports this module for content_hash

    out: dict[str, object] = {
        "inputs": [_normalised_source(f) for f in _with_helpers(wl.create_inputs_fn)],
        "reference": [_normalised_source(f) for f in _with_helpers(wl.reference)],
        "exact": [_normalised_source(f) for f in (_W.create_inputs, _W.static_params, _W.baseline, _W.exact)],
        "profiles": {p: dict(wl.profiles[p]) for p in sorted(wl.profiles)},
        "input_names": list(wl.input_names),
        "tolerance": [wl.atol, wl.rtol],
    }
    if wl.pallas_baseline is not None:  # absent where XLA is the baseline: those hashes stay as recorded
        out["pallas_baseline"] = [_normalised_source(f) for f in _with_helpers(wl.pallas_baseline)]
    if wl.configurations:  # absent for one-configuration workloads: their hashes stay as recorded
        out["configurations"] = {
            p: {n: dict(v) for n, v in wl.configurations[p].items()} for p in sorted(wl.configurations)
        }
    return out


def content_hash(wl: Workload) -> str:
    blob = json.dumps(content_parts(wl), sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:HASH_LENGTH]


def _module_file(wl: Workload) -> str:
    from . import __path__ as package_path  # deferred: the package imports its modules

    level = f"l{wl.level}_" if wl.bare_id != wl.id else ""
    prefix = f"{level}w{wl.number:02d}{wl.id[-1]}_"
    for info in pkgutil.iter_modules(package_path):
        if info.name.startswith(prefix):
            return info.name + ".py"
    return f"{prefix}*.py"


def check(wl: Workload) -> str | None:
    """Why the declared version and the recorded one disagree, with what to do; None when fine."""
    recorded = RECORDED.get(wl.id)
    where = _module_file(wl)
    if recorded is None:
        return (
            f"workload {wl.id}: no version recorded; add {wl.id!r}: ({wl.version}, {wl.content_hash!r}) "
            "to RECORDED in jaxbench/workloads/versions.py"
        )
    version, digest = recorded
    if digest != wl.content_hash and version == wl.version:
        return (
            f"workload {wl.id}: its definition changed (hash {digest} -> {wl.content_hash}) without a "
            f"version bump: set version={wl.version + 1} in jaxbench/workloads/{where} and record "
            f"{wl.id!r}: ({wl.version + 1}, {wl.content_hash!r}) in jaxbench/workloads/versions.py "
            "(if the change does not alter inputs, reference, exact computation, tolerance or profiles, "
            "make it hash-neutral instead)"
        )
    if version != wl.version or digest != wl.content_hash:
        return (
            f"workload {wl.id}: {where} declares version {wl.version} (hash {wl.content_hash}) but "
            f"versions.py records ({version}, {digest!r}); record {wl.id!r}: ({wl.version}, "
            f"{wl.content_hash!r}) there"
        )
    return None
