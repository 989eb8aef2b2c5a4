"""The null-kernel audit: do-nothing kernels, judged by our rule and by the public suite's.

A null kernel returns something that needs no computation of the workload. For every workload,
at the small profile, with the inputs of key :data:`KEY`:

* ``zeros``: every output element 0;
* ``constant``: one number everywhere, fixed before the inputs are seen: the mean of the exact
  answer for another draw of the inputs (key :data:`CONSTANT_KEY`), what a kernel that memorised
  one answer would return;
* ``mean``: the mean of the exact answer for these very inputs, broadcast over each output leaf
  (the best any constant could do: it passes only when the output carries no information
  within the tolerance); "n/a" for a one-element output, whose mean is the answer;
* ``input:<name>``: an input passed through (cast to the output's dtype), where its shape is the
  output's; "n/a" with the reason otherwise.

Our side applies the harness's own rule (:func:`jaxbench.verdict.numerics.exact_rule_report`:
the exact answer, XLA's own error as the allowance, the workload's tolerance), the rule
``tests/jaxbench/workloads/test_registry_audit.py`` asserts with. Every null kernel must fail,
except where a documented degeneracy (``Workload.degenerate``) says why not. The public side
(``benchmarks/null_audit.py``) runs the public file at its recorded commit and asks the public
harness's own check which null kernels it accepts. Both are written to ``null_audit.json``
beside this module, per workload with the ``content_hash`` it was computed for, so that a
version bump shows a stale audit until the generator is run again.

Reading the data (:func:`load`, :func:`entry`) needs neither Django nor JAX; computing our side
(:func:`ours`) imports JAX when called.
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
from typing import Any

DATA_FILE = pathlib.Path(__file__).with_name("null_audit.json")
PROFILE = "small"
KEY = 0
CONSTANT_KEY = 1
FIXED_KERNELS = ("zeros", "constant", "mean")
ONE_ELEMENT = "a one-element output: its mean is the answer itself"
SIGNIFICANT = 4


def _round(x: float) -> float:
    """``x`` to :data:`SIGNIFICANT` significant digits (the file stays readable and stable)."""
    if x == 0 or not math.isfinite(x):
        return float(x)
    return float(f"{x:.{SIGNIFICANT}g}")


def kernel_names(input_names) -> list[str]:
    return [*FIXED_KERNELS, *(f"input:{n}" for n in input_names)]


def ours(wl, profile: str = PROFILE) -> dict[str, Any]:
    """Our side of the audit for workload ``wl``: per null kernel, whether the harness's rule
    accepts it (``passes``), the worst element's error over its allowance (``excess``: above 1
    fails), how many elements fail (``n_fail`` of ``size``), and ``value`` for the constants;
    an input of another shape is ``applicable: false`` with the ``reason``."""
    import jax  # deferred: the portal reads the data file without JAX
    import numpy as np

    from ..verdict.numerics import exact_rule_report  # deferred like JAX: only the generator computes

    create = jax.jit(lambda key: tuple(wl.create_inputs(profile, key)))
    exact_fn = jax.jit(wl.exact(profile))
    inputs = jax.block_until_ready(create(jax.random.key(KEY)))
    xla = jax.tree_util.tree_leaves(jax.block_until_ready(jax.jit(wl.baseline(profile))(*inputs)))
    exact = [np.asarray(y, np.float32) for y in jax.tree_util.tree_leaves(exact_fn(*inputs))]
    other_inputs = create(jax.random.key(CONSTANT_KEY))
    other = [np.asarray(y, np.float32) for y in jax.tree_util.tree_leaves(exact_fn(*other_inputs))]
    xla32 = [np.asarray(y, np.float32) for y in xla]

    def judge(cands: list) -> dict[str, Any]:
        reports = [
            exact_rule_report(e, x, np.asarray(c, np.float32), wl.atol, wl.rtol)
            for e, x, c in zip(exact, xla32, cands, strict=True)
        ]
        return {
            "passes": all(r["passed"] for r in reports),
            "excess": _round(max(r["worst_excess"] for r in reports)),
            "n_fail": sum(r["n_fail"] for r in reports),
            "size": sum(int(e.size) for e in exact),
        }

    kernels: dict[str, dict[str, Any]] = {}
    kernels["zeros"] = judge([np.zeros_like(e) for e in exact])
    constants = [_round(float(np.mean(o))) for o in other]
    kernels["constant"] = {**judge([np.full_like(e, c) for e, c in zip(exact, constants)]), "value": constants}
    if all(e.size == 1 for e in exact):
        kernels["mean"] = {"applicable": False, "reason": ONE_ELEMENT}
    else:
        means = [float(np.mean(e)) for e in exact]
        kernels["mean"] = {
            **judge([np.full_like(e, m) for e, m in zip(exact, means)]),
            "value": [_round(m) for m in means],
        }
    for name, x in zip(wl.input_names, inputs, strict=True):
        fits = [tuple(x.shape) == tuple(y.shape) for y in xla]
        if not any(fits):
            shapes = ", ".join(str(tuple(y.shape)) for y in xla)
            kernels[f"input:{name}"] = {
                "applicable": False,
                "reason": f"its shape {tuple(x.shape)} is not the output's {shapes}",
            }
            continue
        # pass it through where it fits, the exact answer's zeros elsewhere (one output here)
        cands = [
            np.asarray(x.astype(y.dtype), np.float32) if fit else np.zeros_like(e)
            for fit, y, e in zip(fits, xla, exact)
        ]
        kernels[f"input:{name}"] = judge(cands)
    return {"profile": profile, "key": KEY, "constant_key": CONSTANT_KEY, "kernels": kernels}


def applicable(kernels: dict[str, dict]) -> dict[str, dict]:
    return {k: v for k, v in kernels.items() if v.get("applicable", True)}


def passing(side: dict | None) -> list[str]:
    """The null kernels a side of the audit accepts (an empty list when none, or not run)."""
    if not side or "kernels" not in side:
        return []
    return [k for k, v in applicable(side["kernels"]).items() if v.get("passes")]


@functools.lru_cache(maxsize=1)
def _load_file(path: str, mtime: float) -> dict:
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def load(path: pathlib.Path = DATA_FILE) -> dict:
    """The whole data file ({} when it has not been generated)."""
    if not path.is_file():
        return {}
    return _load_file(str(path), path.stat().st_mtime)


def entry(wl) -> dict | None:
    """The audit of workload ``wl`` as stored, with ``current``: whether it was computed for
    ``wl``'s current content hash (a version bump makes it stale until the generator runs)."""
    data = load().get("workloads", {}).get(wl.id)
    if data is None:
        return None
    return {**data, "current": data.get("content_hash") == wl.content_hash}


def summary_line(side: dict | None) -> str:
    """'all 5 fail', 'mean passes', 'not run': one line for a side of the audit."""
    if not side or side.get("status", "run") != "run":
        return "not run"
    ok = passing(side)
    n = len(applicable(side["kernels"]))
    if not ok:
        return f"all {n} fail"
    return f"{', '.join(ok)} pass{'es' if len(ok) == 1 else ''}"
