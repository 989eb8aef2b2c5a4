"""Cold command-line wall time: ``python -m jaxbench evaluate`` against the public suite's own
evaluator (``python -m JAXBench evaluate``) on the same kernel, on this CPU, each in a fresh
process. The kernel is the 12p example; the public evaluator runs it through JAX's generic Pallas
interpreter (``interpret=True`` on every ``pallas_call``: the program our cpu target times) on
the public 12p baseline at our small profile's sizes (its ``CONFIG`` updated in a temporary copy).

Ours is timed twice per repeat: with an empty cache directory (the baseline is timed alone first)
and again with that cache (a user's second command). The public evaluator: one process, no
sandbox, 5 warm-up and 50 timed calls of each program, one trace. Prints each wall time, the
medians and the ratios (ours / public). Needs a checkout of the public suite (never committed
here): ``--suite DIR`` holds ``JAXBench/``.

    .venv/bin/python benchmarks/cold_cli.py --suite /path/to/accelerator-agents [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "jaxbench" / "kernels" / "examples" / "12p-rmsnorm.py"
SMALL = {"batch": 2, "seq_len": 256, "emb_dim": 512}  # jaxbench.workloads 12p, profile small
PUBLIC_WORKLOAD = "12p_RMSNorm"

INTERPRETED = """# the 12p example under JAX's generic Pallas interpreter (what the portal's cpu target times)
import functools
import pathlib

from jax.experimental import pallas as pl

pl.pallas_call = functools.partial(pl.pallas_call, interpret=True)
_path = {path!r}
exec(compile(pathlib.Path(_path).read_text(), _path, "exec"))
"""


def public_copy(suite: pathlib.Path, into: pathlib.Path) -> None:
    """The public package with only its harness and the 12p workload, 12p's sizes set to ours."""
    src = suite / "JAXBench"
    dst = into / "JAXBench"
    dst.mkdir()
    for f in ("__init__.py", "__main__.py"):
        shutil.copy(src / f, dst / f)
    shutil.copytree(src / "harness", dst / "harness")
    (dst / "benchmark").mkdir()
    shutil.copy(src / "benchmark" / "__init__.py", dst / "benchmark" / "__init__.py")
    shutil.copytree(src / "benchmark" / PUBLIC_WORKLOAD, dst / "benchmark" / PUBLIC_WORKLOAD)
    baseline = dst / "benchmark" / PUBLIC_WORKLOAD / "baseline.py"
    baseline.write_text(baseline.read_text() + f"\nCONFIG.update({SMALL!r})\n")
    (into / "kernel.py").write_text(INTERPRETED.format(path=str(EXAMPLE)))


def timed(argv: list[str], cwd: pathlib.Path, env: dict[str, str]) -> tuple[float, str]:
    t = time.monotonic()
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - t
    text = (out.stdout + out.stderr).strip().splitlines()
    return wall, f"exit {out.returncode}: " + " | ".join(line.strip() for line in text[-3:])[:300]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, help="a checkout of AI-Hypercomputer/accelerator-agents")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    suite = pathlib.Path(args.suite).resolve()
    if not (suite / "JAXBench" / "harness" / "evaluator.py").exists():
        raise SystemExit(f"{suite} holds no JAXBench/harness/evaluator.py")
    walls: dict[str, list[float]] = {"ours, empty cache": [], "ours, cached baseline": [], "public": []}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = pathlib.Path(tmp_s)
        public_copy(suite, tmp)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("JAXBENCH_")}
        public_env = {**base_env, "PYTHONPATH": str(tmp), "JAX_PLATFORMS": "cpu"}
        public = [sys.executable, "-m", "JAXBench", "evaluate", "--workload", PUBLIC_WORKLOAD]
        public += ["--kernel", str(tmp / "kernel.py"), "--tpu", "v5e"]
        ours = [sys.executable, "-m", "jaxbench", "evaluate", "--workload", "12p", "--kernel", str(EXAMPLE)]
        ours += ["--profile", "small", "--hardware", "cpu"]
        for i in range(args.repeats):
            var = tmp / f"var{i}"
            env = {**base_env, "PYTHONPATH": str(ROOT), "JAXBENCH_VAR_DIR": str(var)}
            env["JAXBENCH_CACHE_DIR"] = str(var / "cache")
            for label, argv, cwd, e in (
                ("ours, empty cache", ours, ROOT, env),
                ("ours, cached baseline", ours, ROOT, env),
                ("public", public, tmp, public_env),
            ):
                wall, said = timed(argv, cwd, e)
                walls[label].append(wall)
                print(f"{label:<22} {wall:6.1f} s  {said}", flush=True)
    med = {k: statistics.median(v) for k, v in walls.items()}
    print()
    for k, v in med.items():
        print(f"median {k:<22} {v:6.1f} s")
    for k in ("ours, empty cache", "ours, cached baseline"):
        print(f"ratio {k} / public: {med[k] / med['public']:.2f}")


if __name__ == "__main__":
    main()
