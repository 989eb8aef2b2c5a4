"""Upstream tracking: which public suite file each workload matches, and where it departs from it.

The public JAXBench suite lives in ``AI-Hypercomputer/accelerator-agents`` under ``JAXBench/``
and keeps changing (inputs redrawn after no-op exploits, operators and conventions fixed). Each
level-1 workload module declares, in its own ``Workload(...)``:

* ``upstream=Upstream(file, commit, date)``: the public ``baseline.py`` it matches, and the
  newest commit touching that file whose version it matches (the evidence: that file, uploaded
  unchanged as a candidate, comes back correct here, ``tests/jaxbench/workloads/
  test_public_files.py``);
* ``deviations=(Deviation(kind, what, why), ...)``: every deliberate departure from that file,
  each with its reason; ``()`` when there is none.

``benchmarks/upstream_drift.py`` compares the recorded commits with a newer copy of the public
repository; docs/WORKLOADS.md, "Upstream tracking", says what to do when a file changed.
Django-free and JAX-free: the portal reads it at import time.
"""

from __future__ import annotations

import dataclasses
import re

REPOSITORY = "AI-Hypercomputer/accelerator-agents"
REPOSITORY_URL = f"https://github.com/{REPOSITORY}"
SUITE_DIR = "JAXBench"
# The public harness's correctness check (numpy allclose, atol = rtol = 1e-2 on float32 copies).
HARNESS_CHECK_FILE = f"{SUITE_DIR}/harness/correctness.py"

# What a deviation is about, in the order the pages list them.
DEVIATION_KINDS = {
    "public-file": "the public baseline.py fails in the public harness itself",
    "tolerance": "a tolerance other than atol = rtol = 1e-2",
    "degenerate": "the public computation is degenerate; kept, and marked",
    "inputs": "inputs drawn differently from the public file, at every profile",
    "small-profile": "the small profile departs from the public file beyond shrinking its sizes",
    "baseline": "a later level's timed baseline is not exactly the kernel the public file vendors",
}

_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
# a level-2 file run on the cpu target with its tuned blocks clamped to the small profile's
# shapes (benchmarks/level2_public.py appends the one TUNED_PARAMS line; no line of it changes)
RUN_CLAMPED = (
    "Run here: the public file, its TUNED_PARAMS set to the small profile's clamped blocks, comes back "
    "correct on the cpu target, a tie with this workload's Pallas baseline."
)
# the same for a twin that runs on a TPU only (benchmarks/tpu_harness.py --public-suite DIR)
RUN_CLAMPED_ON_TPU = (
    "Run here on a TPU v5e: the public file, its TUNED_PARAMS set to the small profile's clamped blocks, "
    "comes back correct, a tie with this workload's Pallas baseline. JAX's Pallas interpreter cannot run "
    "this kernel, so the file is not run on the cpu target."
)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def suite_file(public_name: str, level: int = 1) -> str:
    """The path, inside the public repository, of a workload's ``baseline.py`` (a later level's
    under ``benchmark/level<N>/``)."""
    return f"{SUITE_DIR}/benchmark/{suite_folder(public_name, level)}/baseline.py"


def suite_folder(public_name: str, level: int = 1) -> str:
    """A workload's folder under the public ``benchmark/``: ``8p_GEMM``, ``level2/8p_GEMM``."""
    return public_name if level == 1 else f"level{level}/{public_name}"


def file_url(path: str, commit: str) -> str:
    """The public file ``path`` as it was at ``commit``, on GitHub."""
    return f"{REPOSITORY_URL}/blob/{commit}/{path}"


def commit_url(commit: str) -> str:
    return f"{REPOSITORY_URL}/commit/{commit}"


def history_url(path: str) -> str:
    """Every commit that touched ``path`` on the public default branch."""
    return f"{REPOSITORY_URL}/commits/main/{path}"


@dataclasses.dataclass(frozen=True)
class Upstream:
    """The public suite file a workload matches: ``file`` (path in the public repository),
    ``commit`` (full 40-hex SHA of the newest change to that file that we match) and ``date``
    (that commit's committer date, YYYY-MM-DD; "" where only a stored copy of the file at that
    commit could be read, without its history) and, where the evidence of the match is not the
    file run unchanged as a candidate on the cpu target, ``conformance``: what was done instead
    (the workload page shows it in place of that claim)."""

    file: str
    commit: str
    date: str
    conformance: str = ""

    def __post_init__(self):
        if not self.file.startswith(f"{SUITE_DIR}/") or not self.file.endswith(".py"):
            raise ValueError(f"upstream file {self.file!r} must be a .py path under {SUITE_DIR}/")
        if not _SHA_RE.match(self.commit):
            raise ValueError(f"upstream commit {self.commit!r} must be a full 40-hex SHA (lower case)")
        if self.date and not _DATE_RE.match(self.date):
            raise ValueError(f"upstream date {self.date!r} must be YYYY-MM-DD")

    @property
    def url(self) -> str:
        return file_url(self.file, self.commit)

    @property
    def short(self) -> str:
        return self.commit[:7]

    def summary(self) -> dict:
        return {
            "file": self.file,
            "commit": self.commit,
            "date": self.date,
            "url": self.url,
            "commit_url": commit_url(self.commit),
            "history_url": history_url(self.file),
            "conformance": self.conformance,
        }


@dataclasses.dataclass(frozen=True)
class Deviation:
    """One deliberate departure from the public file: its ``kind`` (a key of
    :data:`DEVIATION_KINDS`), ``what`` differs, and ``why``."""

    kind: str
    what: str
    why: str

    def __post_init__(self):
        if self.kind not in DEVIATION_KINDS:
            raise ValueError(f"unknown deviation kind {self.kind!r}; have {sorted(DEVIATION_KINDS)}")
        if not self.what.strip() or not self.why.strip():
            raise ValueError(f"a {self.kind} deviation needs both what and why")

    def summary(self) -> dict:
        return {"kind": self.kind, "what": self.what, "why": self.why}


def check_deviations(deviations) -> None:
    """Raise unless ``deviations`` is a tuple of :class:`Deviation` (``()`` for none)."""
    if not isinstance(deviations, tuple) or not all(isinstance(d, Deviation) for d in deviations):
        raise TypeError("deviations must be a tuple of Deviation (() when there is none)")
