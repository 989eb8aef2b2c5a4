"""Access to the public JAXBench suite's baseline files for agreement tests.

The public files are never committed here. Point ``JAXBENCH_PUBLIC_SUITE`` at a checkout of the
public suite's ``JAXBench/`` folder (the one holding ``benchmark/``) to run the agreement tests;
without it they are skipped with that reason.
"""

import importlib.util
import pathlib
import sys

import pytest

from jaxbench import environment

ENV = "JAXBENCH_PUBLIC_SUITE"


def public_root() -> pathlib.Path | None:
    path = environment.get(ENV)
    if not path:
        return None
    root = pathlib.Path(path)
    return root if (root / "benchmark").is_dir() else None


def load_public_baseline(workload, config_overrides=None):
    """Import the public ``baseline.py`` of ``workload`` as a fresh module (its CONFIG updated
    with ``config_overrides``), or skip the test when the suite is not available."""
    root = public_root()
    if root is None:
        pytest.skip(f"public suite not available: set {ENV} to its JAXBench/ folder")
    path = root / "benchmark" / workload.public_name / "baseline.py"
    if not path.is_file():
        pytest.fail(f"public suite has no {path}")
    name = f"_public_{workload.id}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.pop(name, None)
    spec.loader.exec_module(mod)
    if config_overrides:
        mod.CONFIG.update(config_overrides)
    return mod
