"""Compile bombs through the real harness: small uploads (1 MB at most) whose programs are huge
or compile for ever. Each must end with the candidate's own verdict (``rejected``
``artifact_too_large`` or ``compile_error`` ``compile_timeout``, never an infrastructure error) in
bounded worker time: at most 60 s each with the default limits (issue 31, item 5). Prints each
bomb's source size, wall time (a fresh pair of sandboxed children each: the worker's warm pool
would save their start-up), verdict and where the time went; asserts nothing.

``--honest``: the figures behind the caps instead (``jaxbench/verdict/artifact.py`` MAX_OPS,
MAX_MODULE_BYTES): every honest kernel (examples, experts, JAX's own TPU kernels as candidates)
exported as the export child does (cpu target: kernels interpreted into plain HLO; TPU and GPU:
native), its module's operations and bytes, and the time to describe and (cpu) compile it.

``.venv/bin/python benchmarks/compile_bomb.py [--only call_tree,unrolled_30k] [--compile 15]``
``.venv/bin/python benchmarks/compile_bomb.py --honest [--profiles small,full]``
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxbench import harness  # noqa: E402
from jaxbench.harness.settings import DEFAULT_TIMEOUTS, MAX_SOURCE_BYTES  # noqa: E402

WORKLOAD = "12p"  # RMSNorm: x (rows, hidden), scale (hidden,)

# every bomb ends in this honest row-blocked Pallas RMSNorm, so that only its size is wrong
KERNEL = '''
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

CONFIG = {"epsilon": 1e-5}


def _kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    inv = lax.rsqrt(jnp.sum(x * x, axis=-1, keepdims=True) * (1.0 / x.shape[-1]) + CONFIG["epsilon"])
    o_ref[...] = (x * inv).astype(o_ref.dtype) * s_ref[...]


def rmsnorm(x, scale):
    *lead, e = x.shape
    rows = x.size // e
    x2 = x.reshape(rows, e)
    out = pl.pallas_call(
        _kernel,
        grid=(rows // 32,),
        in_specs=[pl.BlockSpec((32, e), lambda i: (i, 0)), pl.BlockSpec((1, e), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((32, e), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x2.shape, x2.dtype),
    )(x2, scale.reshape(1, e))
    return out.reshape(x.shape)
'''


def _python_loop(n: int) -> str:
    # tracing unrolls it: ~4 operations an iteration
    return (
        KERNEL
        + f"""

def workload(x, scale):
    y = x
    for _ in range({n}):
        y = y * 1.0001 + 0.5
    return rmsnorm(y, scale)
"""
    )


def _straight_line(nbytes: int) -> str:
    # the upload itself is the unrolled program: one statement a line up to nbytes of source
    head = KERNEL + "\n\ndef workload(x, scale):\n    y = x\n"
    line, tail = "    y = y * 1.0001 + 0.5\n", "    return rmsnorm(y, scale)\n"
    n = (nbytes - len(head) - len(tail)) // len(line)
    return head + line * n + tail


def _call_tree(depth: int) -> str:
    # a few hundred operations, no FLOP outside the kernel (a reversal is free), but XLA inlines
    # every call: 2**depth reversals
    return (
        KERNEL
        + f"""

def workload(x, scale):
    def f(y):
        return y[::-1]

    for _ in range({depth}):
        f = jax.jit(lambda y, f=f: f(f(y)))
    return rmsnorm(f(x), scale)
"""
    )


def _select_chain(n: int) -> str:
    # ~3 operations a step, no FLOP outside the kernel (comparisons, selections and reversals are
    # free): under both caps, and XLA:CPU compiles 10,000 steps for many minutes
    return (
        KERNEL
        + f"""

def workload(x, scale):
    y = x
    for _ in range({n}):
        y = lax.select(y > 0, y, y[::-1])
    return rmsnorm(y, scale)
"""
    )


def _scan_unroll(n: int) -> str:
    # traced once, unrolled n times by the lowering
    return (
        KERNEL
        + f"""

def workload(x, scale):
    y, _ = lax.scan(lambda c, _: (c * 1.0001 + 0.5, None), x, length={n}, unroll={n})
    return rmsnorm(y, scale)
"""
    )


def _big_constant(nbytes: int) -> str:
    # a constant built at import and closed over: the module carries it
    return (
        KERNEL
        + f"""
import numpy as np

_C = np.arange({nbytes // 4}, dtype=np.float32)


def workload(x, scale):
    return rmsnorm(x + jnp.asarray(_C)[-1:].astype(x.dtype) * 0, scale)
"""
    )


BOMBS = {
    "unrolled_30k": lambda: _python_loop(30_000),
    "unrolled_1m": lambda: _python_loop(1_000_000),
    "straight_line_1mb": lambda: _straight_line(MAX_SOURCE_BYTES - 1024),
    "select_chain": lambda: _select_chain(10_000),
    "call_tree": lambda: _call_tree(40),
    "scan_unroll_1m": lambda: _scan_unroll(1_000_000),
    "big_constant": lambda: _big_constant(64 << 20),
}


def run_bombs(only: set[str], timeouts: dict | None) -> None:
    limits = dict(DEFAULT_TIMEOUTS, **(timeouts or {}))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; limits {limits}")
    print("baseline (not counted) ...", flush=True)
    baseline = harness.measure_baseline(WORKLOAD, profile="small", hardware="cpu")
    print(
        f"{'bomb':<18} {'source':>8} {'wall s':>7} {'export':>7} {'load':>6} {'compile':>7}  verdict",
        flush=True,
    )
    worst = 0.0
    for name, make in BOMBS.items():
        if only and name not in only:
            continue
        src = make()
        size = len(src.encode())
        assert size <= MAX_SOURCE_BYTES, (name, size)
        t = time.monotonic()
        try:
            rec = harness.evaluate(WORKLOAD, src, profile="small", hardware="cpu", baseline=baseline, timeouts=timeouts)
        except harness.InfrastructureError as exc:
            print(f"{name:<18} {size / 1e3:>6.1f}KB {time.monotonic() - t:>7.1f}  INFRASTRUCTURE ERROR {exc!s:.300}")
            continue
        wall = time.monotonic() - t
        worst = max(worst, wall)
        p = rec.get("phases") or {}

        def s(key, p=p):
            v = p.get(key)
            return f"{v:>.1f}" if isinstance(v, (int, float)) else "-"

        print(
            f"{name:<18} {size / 1e3:>6.1f}KB {wall:>7.1f} {s('export_s'):>7} {s('load_s'):>6} {s('compile_s'):>7}  "
            f"{rec['outcome']} {rec.get('error_category')}",
            flush=True,
        )
        print("      " + (rec.get("message") or "")[:240].replace("\n", " | "), flush=True)
    print(f"(the longest: {worst:.1f} s)")


def _kernels():
    from jaxbench.kernels import experts

    examples = ROOT / "jaxbench" / "kernels" / "examples"
    for p in sorted(examples.glob("*.py")):
        if p.name != "__init__.py":
            yield "example", p.name.split("-")[0], p.read_text(), p.name, ("cpu", "tpu")
    for p in sorted((examples / "gpu").glob("*.py")):
        yield "gpu", p.name.split("-")[0], p.read_text(), "gpu/" + p.name, ("cuda",)
    for wid in experts.EXPERTS:
        yield "expert", wid, experts.source(wid), experts.EXPERTS[wid], ("cpu", "tpu")
    for p in sorted((ROOT / "tests" / "jaxbench" / "kernels" / "jax_candidates").glob("*.py")):
        yield "jax", p.name.split("_")[0], p.read_text(), p.name, ("cpu", "tpu")


def run_honest(profiles: list[str]) -> None:
    import jax

    from jaxbench import workloads
    from jaxbench.profiling import hlo_cost
    from tests.jaxbench.kernels import _candidates as kc

    unstable = [jax.export.DisabledSafetyCheck.custom_call(t) for t in ("__gpu$xla.gpu.triton", "triton_kernel_call")]
    print(
        f"{'kind':<8} {'target':<6} {'case':<14} {'ops':>7} {'bytes':>9} {'export':>7} {'facts':>6} {'compile':>7}  file"
    )
    top = {"ops": (0, ""), "bytes": (0, "")}
    for kind, wid, src, name, targets in _kernels():
        wl = workloads.get(wid)
        for profile in profiles:
            for case in wl.cases(profile):
                for target in targets:
                    try:
                        mod = kc.load_candidate(src, wl, case, filename="candidate.py")
                        specs = wl.input_specs(case)
                        t = time.perf_counter()
                        if target == "cpu":  # the export child's cpu program: the generic interpreter
                            with kc.gpu_interpret(), kc.tpu_target():
                                exp = jax.export.export(jax.jit(mod.workload), platforms=["cpu"])(*specs)
                        elif target == "tpu":
                            with kc.tpu_target():
                                exp = jax.export.export(jax.jit(mod.workload), platforms=["tpu"])(*specs)
                        else:
                            exp = jax.export.export(
                                jax.jit(mod.workload), platforms=["cuda"], disabled_checks=unstable
                            )(*specs)
                        data = bytes(exp.serialize())
                        export_s = time.perf_counter() - t
                        t = time.perf_counter()
                        facts = hlo_cost.facts_from_bytes(data)
                        facts_s = time.perf_counter() - t
                        compile_s = "-"
                        if target == "cpu":
                            back = jax.export.deserialize(bytearray(data))
                            t = time.perf_counter()
                            jax.jit(back.call).lower(*specs).compile()
                            compile_s = f"{time.perf_counter() - t:.2f}"
                    except Exception as exc:  # noqa: BLE001 - reported, the table goes on
                        print(f"{kind:<8} {target:<6} {case:<14} ({type(exc).__name__}: {str(exc)[:80]})  {name}")
                        continue
                    ops, size = facts["ops"], facts["module_bytes"]
                    where = f"{kind} {wid} {target} {case}"
                    if ops > top["ops"][0]:
                        top["ops"] = (ops, where)
                    if size > top["bytes"][0]:
                        top["bytes"] = (size, where)
                    print(
                        f"{kind:<8} {target:<6} {case:<14} {ops:>7} {size:>9} {export_s:>7.2f} {facts_s:>6.2f} "
                        f"{compile_s:>7}  {name}",
                        flush=True,
                    )
    print(f"largest: {top['ops'][0]} operations ({top['ops'][1]}), {top['bytes'][0]} bytes ({top['bytes'][1]})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated bomb names: " + ",".join(BOMBS))
    ap.add_argument("--compile", type=float, default=None, help="the compile limit, s (default: the harness's)")
    ap.add_argument("--honest", action="store_true", help="the honest kernels' sizes instead")
    ap.add_argument("--profiles", default="small,full", help="with --honest")
    args = ap.parse_args()
    t0 = time.time()
    if args.honest:
        run_honest([p for p in args.profiles.split(",") if p])
    else:
        only = set(filter(None, args.only.split(",")))
        run_bombs(only, None if args.compile is None else {"compile": args.compile})
    print(f"(total {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
