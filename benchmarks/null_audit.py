"""The null-kernel audit (jaxbench/workloads/null_audit.py): computes both sides for every
workload and writes ``jaxbench/workloads/null_audit.json``, the data the portal shows.

Our side: the harness's rule on the null kernels at the small profile (``null_audit.ours``).

The public side: the public ``baseline.py`` at the workload's recorded upstream commit, read from
a git copy of the public repository (``--mirror``; never committed here) and run as the public
harness runs it (``create_inputs(dtype=bfloat16)`` when it takes a dtype, ``jax.jit(workload)``
unless the file sets ``_skip_jit``), and the public harness's own check
(``JAXBench/harness/correctness.py`` at the newest commit that changed it: numpy ``allclose``
with atol = rtol = 1e-2 on float32 copies, the candidate as the second argument) asked which
null kernels it accepts. The public inputs are one fixed set (fixed keys in ``create_inputs``),
so a kernel may memorise anything about them: there the ``constant`` is the reference's own mean,
the same as ``mean``.

Sizes: a public file at its full size is run where our cost model puts the full profile under
``--full-gflop`` (default 25 GFLOP: 6p, 12p, 25k, 46k); every other file is run at our small
profile's sizes, with the public file's own distributions, keys and code: its ``CONFIG`` updated
with the small profile's values, and where ``create_inputs`` hard-codes the full shapes, every
array it draws at a full input shape drawn at that input's small shape instead (the same
function, key, dtype and scale). 7p's scenario is a module constant in the public file: it is
set to the small profile's scenario. What ran is recorded per workload (``sizes``, ``shapes``).
A reduced size can change the public verdict where an output's magnitude depends on a shrunk
axis (a softmax over fewer features, a row sum over fewer terms): the record says which size.

``.venv/bin/python benchmarks/null_audit.py [--mirror PATH] [--only 12p,38k] [--ours-only]``
prints one line per workload and the wall time; ``--only`` updates those entries in place.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import sys
import time
import traceback
import types
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxbench import workloads  # noqa: E402
from jaxbench.workloads import null_audit  # noqa: E402
from jaxbench.workloads.upstream import HARNESS_CHECK_FILE  # noqa: E402
from jaxbench.workloads.upstream_git import Mirror  # noqa: E402

DEFAULT_MIRROR = "/work/.mirror/AI-Hypercomputer+accelerator-agents/repo"
CONSTANT_NOTE = (
    "the public check uses one fixed input set, so the constant a kernel can memorise is its reference's mean"
)

# Module constants of a public file that carry sizes CONFIG does not: set from the small profile.
MODULE_CONSTANTS = {
    "7p": lambda cfg: {
        "ACTIVE_Q_LENS": tuple(cfg["active_q_lens"]),
        "ACTIVE_KV_LENS": tuple(cfg["active_kv_lens"]),
        "NUM_ACTIVE_SEQS": len(cfg["active_q_lens"]),
    },
}

# (module, function name, position of the shape argument) of every array constructor patched
_CONSTRUCTORS = [
    (jax.random, "normal", 1),
    (jax.random, "uniform", 1),
    (jax.random, "randint", 1),
    (jax.random, "truncated_normal", 3),
    (jax.random, "bernoulli", 2),
    (jnp, "zeros", 0),
    (jnp, "ones", 0),
    (jnp, "full", 0),
    (jnp, "empty", 0),
]


def _as_shape(shape) -> tuple | None:
    if isinstance(shape, int | np.integer):
        return (int(shape),)
    if isinstance(shape, tuple | list) and all(isinstance(d, int | np.integer) for d in shape):
        return tuple(int(d) for d in shape)
    return None


@contextlib.contextmanager
def _resized(shape_map: dict[tuple, list[tuple]], used: list):
    """Within the block, the array constructors draw at a small shape when asked for a full one
    in ``shape_map`` (the public file's hard-coded full shapes): the inputs of that full shape,
    in their order (26k's x and y share a full shape but not a small one), the last one again
    for any further call."""
    saved = []
    calls: dict[tuple, int] = {}

    def small(s):
        n = calls.get(s, 0)
        calls[s] = n + 1
        used.append(s)
        options = shape_map[s]
        return options[min(n, len(options) - 1)]

    def wrap(fn, pos):
        def inner(*args, **kwargs):
            args = list(args)
            if len(args) > pos:
                s = _as_shape(args[pos])
                if s in shape_map:
                    args[pos] = small(s)
            elif "shape" in kwargs:
                s = _as_shape(kwargs["shape"])
                if s in shape_map:
                    kwargs["shape"] = small(s)
            return fn(*args, **kwargs)

        return inner

    try:
        for mod, name, pos in _CONSTRUCTORS:
            fn = getattr(mod, name)
            saved.append((mod, name, fn))
            setattr(mod, name, wrap(fn, pos))
        yield
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def _module(source: str, name: str, filename: str) -> types.ModuleType:
    """The public file's source as a fresh module (registered, as the public loader does)."""
    mod = types.ModuleType(name)
    mod.__file__ = filename
    sys.modules[name] = mod
    exec(compile(source, filename, "exec"), mod.__dict__)  # the public suite's own file, from the mirror
    return mod


def _public_check(mirror: Mirror):
    """The public harness's check_correctness, from its file at the newest commit changing it."""
    commit = mirror.last_commit(HARNESS_CHECK_FILE)
    mod = _module(mirror.show(commit, HARNESS_CHECK_FILE), "_public_correctness", HARNESS_CHECK_FILE)
    return mod.check_correctness, commit, (float(mod.ATOL), float(mod.RTOL))


def _ratio(ref: np.ndarray, cand: np.ndarray, atol: float, rtol: float) -> float:
    """The worst element's |ref - cand| over numpy allclose's bound atol + rtol*|cand|."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.abs(ref - cand) / (atol + rtol * np.abs(cand))
    return null_audit._round(float(np.nanmax(r))) if r.size else 0.0


def _specs(wl, profile):
    return [(tuple(s.shape), str(s.dtype)) for s in wl.input_specs(profile)]


def public_side(wl, mirror: Mirror, check, check_commit: str, tol, full_gflop: float) -> dict[str, Any]:
    up = wl.upstream
    out: dict[str, Any] = {
        "commit": up.commit,
        "file": up.file,
        "check_commit": check_commit,
        "atol": tol[0],
        "rtol": tol[1],
    }
    full = wl.cost("full")[0] <= full_gflop * 1e9
    out["sizes"] = "full" if full else "small"
    source = mirror.show(up.commit, up.file)
    name = f"_public_{wl.id}"
    try:
        mod = _module(source, name, up.file)
        shape_map: dict[tuple, list[tuple]] = {}
        expected = _specs(wl, "full" if full else "small")
        if not full:
            cfg = wl.config("small")
            mod.CONFIG = {**getattr(mod, "CONFIG", {}), **cfg}
            for k, v in MODULE_CONSTANTS.get(wl.id, lambda c: {})(cfg).items():
                setattr(mod, k, v)
            for (fs, _), (ss, _) in zip(_specs(wl, "full"), expected, strict=True):
                shape_map.setdefault(fs, []).append(ss)
            shape_map = {fs: ss for fs, ss in shape_map.items() if any(s != fs for s in ss)}
        create = mod.create_inputs
        used: list = []
        with _resized(shape_map, used):
            inputs = create(dtype=jnp.bfloat16) if "dtype" in create.__code__.co_varnames else create()
        if not isinstance(inputs, list | tuple):
            inputs = (inputs,)
        out["shapes"] = [list(np.shape(x)) for x in inputs]
        out["dtypes"] = [str(getattr(x, "dtype", type(x).__name__)) for x in inputs]
        out["resized"] = bool(used)  # create_inputs hard-codes full shapes, drawn at small ones
        got = [tuple(np.shape(x)) for x in inputs]
        if got[: len(expected)] != [s for s, _ in expected]:
            out["note"] = (
                f"the public create_inputs gave shapes {got} where our inputs are {[s for s, _ in expected]}; "
                "its own workload() was run on them as the public harness would"
            )
        fn = mod.workload if getattr(mod, "_skip_jit", False) else jax.jit(mod.workload)
        try:
            ref = jax.block_until_ready(fn(*inputs))
        except Exception as exc:  # noqa: BLE001 - the public harness fails here too: no kernel can pass
            msg = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            out.update(
                status="error",
                reason=f"the public baseline fails in its own harness before any check: {type(exc).__name__}: {msg}",
            )
            return out
    finally:
        sys.modules.pop(name, None)
    leaves = [np.asarray(y, np.float32) for y in jax.tree_util.tree_leaves(ref)]
    atol, rtol = tol

    def judge(cands):
        res = check(ref, cands[0] if len(cands) == 1 and not isinstance(ref, list | tuple) else cands)
        ratio = max(_ratio(r, np.asarray(c, np.float32), atol, rtol) for r, c in zip(leaves, cands, strict=True))
        return {"passes": bool(res["correct"]), "max_diff": null_audit._round(float(res["max_diff"])), "excess": ratio}

    kernels: dict[str, dict] = {}
    kernels["zeros"] = judge([np.zeros_like(r) for r in leaves])
    means = [float(np.mean(r)) for r in leaves]
    mean_result = judge([np.full_like(r, m) for r, m in zip(leaves, means)])
    rounded = [null_audit._round(m) for m in means]
    kernels["constant"] = {**mean_result, "value": rounded, "note": CONSTANT_NOTE}
    if all(r.size == 1 for r in leaves):
        kernels["mean"] = {"applicable": False, "reason": null_audit.ONE_ELEMENT}
    else:
        kernels["mean"] = {**mean_result, "value": rounded}
    for iname, x in zip(wl.input_names, inputs):
        shape = tuple(np.shape(x))
        if not any(shape == r.shape for r in leaves):
            shapes = ", ".join(str(r.shape) for r in leaves)
            kernels[f"input:{iname}"] = {
                "applicable": False,
                "reason": f"its shape {shape} is not the output's {shapes}",
            }
            continue
        kernels[f"input:{iname}"] = judge(
            [np.asarray(x, np.float32) if shape == r.shape else np.zeros_like(r) for r in leaves]
        )
    out.update(status="run", kernels=kernels)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default=DEFAULT_MIRROR, help="git copy of the public repository")
    ap.add_argument("--only", default="", help="comma-separated workload IDs (update those entries)")
    ap.add_argument("--ours-only", action="store_true", help="skip the public side (kept as it was)")
    ap.add_argument("--full-gflop", type=float, default=25.0, help="run a public file at full size below this")
    ap.add_argument("--out", default=str(null_audit.DATA_FILE))
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w]
    out_path = pathlib.Path(args.out)
    old = json.loads(out_path.read_text()) if out_path.is_file() else {}
    data: dict[str, Any] = {
        "about": "benchmarks/null_audit.py: null kernels under our rule and the public suite's (null_audit.py)",
        "jax": jax.__version__,
        "platform": jax.devices()[0].platform,
        "workloads": dict(old.get("workloads", {})) if only else {},
    }
    mirror = check = None
    if not args.ours_only:
        mirror = Mirror(args.mirror)
        check, check_commit, tol = _public_check(mirror)
    t0 = time.time()
    print(f"{'workload':<9}{'ours':<28}{'public':<40}{'sizes':<7}{'s':>6}")
    for wl in workloads.all_workloads():
        if wl.level != 1 or (only and wl.id not in only):
            continue
        t = time.time()
        entry: dict[str, Any] = {"content_hash": wl.content_hash, "version": wl.version}
        entry["ours"] = null_audit.ours(wl)
        if args.ours_only:
            entry["public"] = old.get("workloads", {}).get(wl.id, {}).get("public")
        else:
            try:
                entry["public"] = public_side(wl, mirror, check, check_commit, tol, args.full_gflop)
            except Exception as exc:  # noqa: BLE001 - recorded as "not run" with the reason
                traceback.print_exc()
                entry["public"] = {
                    "commit": wl.upstream.commit,
                    "file": wl.upstream.file,
                    "status": "not run",
                    "reason": f"the generator could not run it here: {type(exc).__name__}: {str(exc)[:200]}",
                }
        data["workloads"][wl.id] = entry
        pub = entry["public"] or {}
        line = null_audit.summary_line(pub) if pub.get("status") == "run" else pub.get("status", "-")
        print(
            f"{wl.id:<9}{null_audit.summary_line(entry['ours']):<28}{line:<40}{pub.get('sizes', ''):<7}{time.time() - t:6.1f}",
            flush=True,
        )
        jax.clear_caches()
    data["workloads"] = {k: data["workloads"][k] for k in sorted(data["workloads"], key=lambda w: int(w[:-1]))}
    out_path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(
        f"wrote {out_path} ({len(data['workloads'])} workloads) in {time.time() - t0:.0f} s wall, load {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
