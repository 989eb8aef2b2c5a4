"""What a caller of the sandbox sets and catches: the limits, the options, the errors."""

from __future__ import annotations

import dataclasses


class SandboxError(RuntimeError):
    """The sandbox itself failed (an infrastructure problem, not the candidate's)."""


class PhaseTimeout(Exception):
    pass


class ChildGone(Exception):
    """The child exited or closed its status channel."""


@dataclasses.dataclass
class Limits:
    memory_bytes: int = 4 << 30
    pids: int = 512
    cpu_seconds: int = 1800
    file_bytes: int = 1 << 30
    open_files: int = 1024
    nproc: int = 1024
    address_space_bytes: int | None = None  # None: derived (no limit on accelerators)
    tmp_bytes: int = 256 << 20
    work_bytes: int = 2 << 30
    output_cap: int = 64 << 10  # kept per stream (stdout, stderr)
    cpus: list[int] | None = None  # CPU affinity; None: default_cpus(platform)


@dataclasses.dataclass
class SandboxOptions:
    platform: str = "cpu"
    probe: bool = False  # start the interpreter only (see best_mode)
    limits: Limits = dataclasses.field(default_factory=Limits)
    base_dir: str | None = None
    mode: str | None = None  # None: the strongest that works here; or
    # "bwrap-unprivileged", "bwrap", "none"
    # "timer": runs exported programs on the platform's device; "export": imports the
    # candidate's module and writes its programs, with no device (platform cpu) and no inputs
    role: str = "timer"
