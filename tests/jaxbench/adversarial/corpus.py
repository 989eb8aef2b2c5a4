"""The red-team corpus as uploads: every candidate file of tests/jaxbench/harness/candidates and
tests/jaxbench/adversarial/candidates, with its expected verdicts and its shared helpers inlined
(an attack names a ``_name.py`` helper of its folder with one relative import, and is uploaded
as one self-contained file, as any candidate is)."""

import pathlib
import re

from jaxbench.self_contained import inline_shared

ROOT = pathlib.Path(__file__).resolve().parents[3]
HARNESS_DIR = ROOT / "tests" / "jaxbench" / "harness" / "candidates"
ADVERSARIAL_DIR = ROOT / "tests" / "jaxbench" / "adversarial" / "candidates"
DIRS = [HARNESS_DIR, ADVERSARIAL_DIR]
EXPECT_RE = re.compile(r"^# expect: (.+)$", re.M)
# The corpus's compile bombs, and what one evaluation of such an upload (under 1 MiB) may cost
# the worker at the default limits (tests/jaxbench/harness/test_compile_cost.py says why it is
# enough; the corpus pipeline test holds each bomb to it)
COMPILE_BOMBS = ("compile_bomb_ops.py", "compile_bomb_slow_xla.py", "huge_compile.py")
WORKER_SECONDS = 60.0


def files() -> list[pathlib.Path]:
    """Every candidate (a ``_name.py`` file is a shared helper, not a candidate)."""
    return sorted(p for d in DIRS for p in d.glob("*.py") if not p.name.startswith("_"))


def source(path: pathlib.Path) -> str:
    """What is uploaded for this candidate."""
    return inline_shared(path.read_text(), path.parent, str(path.parent.relative_to(ROOT)))


def expectations(path: pathlib.Path) -> list[tuple[str, str | None]]:
    """The ``# expect: outcome [category] | ...`` alternatives of a candidate file."""
    m = EXPECT_RE.search(path.read_text())
    assert m, f"{path} has no '# expect:' line"
    alts = [a.split() for a in m.group(1).split("|")]
    return [(a[0], a[1] if len(a) > 1 else None) for a in alts]
