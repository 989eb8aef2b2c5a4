"""jaxbench is installable on its own: a wheel of jaxbench/ alone, pinned like the portal, that
runs its CLI and client with no Django, DRF, Dramatiq or portal app importable."""

import pathlib
import re
import subprocess
import sys
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PORTAL = (
    "django",
    "rest_framework",
    "dramatiq",
    "django_dramatiq",
    "portal",
    "leaderboard",
    "evaluator",
    "submissions",
    "catalog",
)


def _pins(path: pathlib.Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_the_packages_pins_are_the_portals():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + [d for ds in project["optional-dependencies"].values() for d in ds]
    runtime = _pins(ROOT / "requirements.txt")
    for dep in deps:
        name, version = dep.split("==")
        assert runtime[name.lower().replace("_", "-")] == version, dep
    assert not any(d.split("==")[0].lower() in ("django", "djangorestframework", "dramatiq") for d in deps)


def test_the_gpu_requirements_pin_the_cuda_plugin_to_jax():
    """requirements-gpu.txt adds only JAX's CUDA plugin, at exactly the runtime's jax version (a
    plugin of another version refuses to load, and the GPU worker would fall back to nothing)."""
    text = (ROOT / "requirements-gpu.txt").read_text()
    assert "-r requirements.txt" in text.splitlines()
    jax_version = _pins(ROOT / "requirements.txt")["jax"]
    gpu = dict(re.findall(r"^([a-z0-9-]+)(?:\[[a-z-]+\])?==(\S+)$", text, re.M))
    assert gpu == {"jax-cuda12-plugin": jax_version, "jax-cuda12-pjrt": jax_version}
    assert "jax-cuda12-plugin[with-cuda]==" in text  # the CUDA libraries come as pip packages
    # CI and `make test` never install it
    assert "requirements-gpu.txt" not in (ROOT / "requirements-test.txt").read_text()


def test_the_wheel_holds_jaxbench_alone_and_runs_without_the_portal(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("jaxbench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"jaxbench", wheel.name.split("-py3")[0] + ".dist-info"}
    for needed in (
        "jaxbench/sandbox/child_main.py",
        "jaxbench/kernels/examples/12p-rmsnorm.py",
        "jaxbench/kernels/experts/README.md",
        "jaxbench/workloads/w12p_rmsnorm.py",
    ):
        assert needed in names, needed
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "jaxbench = jaxbench.cli:run" in entry

    site = tmp_path / "site"
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    # run from outside the checkout, the portal's packages refused at import
    blocker = (
        "import sys, importlib.abc\n"
        f"PORTAL = {PORTAL!r}\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in PORTAL:\n"
        "            raise ImportError(f'{name} is not installed here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import runpy, jaxbench\n"
        f"assert jaxbench.__file__.startswith({str(site)!r}), jaxbench.__file__\n"
        "sys.argv = sys.argv[1:]\n"
        "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}
    for args, expect in ((["jaxbench", "list"], "12p-rmsnorm"), (["jaxbench.client", "--help"], "submit-trace")):
        run = subprocess.run(
            [sys.executable, "-c", blocker, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0 and expect in run.stdout, (args, run.stdout[-2000:], run.stderr[-3000:])
