"""The workload interface shared by all 50 modules of the suite.

A workload module defines plain functions and one ``WORKLOAD = Workload(...)`` value:

* ``create_inputs(cfg, key) -> tuple of arrays``: deterministic from ``key``; ``cfg`` is the
  profile's parameter dict.
* ``reference(*inputs, <static params as keyword-only arguments>)``: the XLA baseline in plain
  JAX. Its keyword-only parameters are filled from the profile, so the baseline called by the
  harness is ``reference(*inputs)`` exactly as a candidate's ``workload(*inputs)``.
* ``cost(cfg) -> (flops, bytes)``: analytic FLOPs and HBM bytes moved, for roofline charts.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

from .upstream import Deviation, Upstream, check_deviations

SOURCES = ("maxtext", "kernelbench-l2", "deepseek-v4", "tokamax")
# The letter an ID ends with says its source; levels number on: level 1 is the public suite's 50
# (1p-17p production, 18k-50k KernelBench), level 2 starts at 51 (DESIGN.md, "Levels").
ID_LETTERS = {"maxtext": "p", "kernelbench-l2": "k", "deepseek-v4": "d", "tokamax": "p"}
LEVELS = (1, 2)
LEVEL_ONE_SIZE = 50
CATEGORIES = (
    "attention",
    "matmul",
    "mlp",
    "moe",
    "normalization",
    "loss",
    "recurrent",
    "structure",
    "conv",
    "fused-gemm",
)
PROFILES = ("full", "small")
# A multi-configuration workload's harness-level profile names one configuration: "small/b4_s512".
CASE_SEP = "/"
_CONFIG_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")
DEFAULT_ATOL = 1e-2
DEFAULT_RTOL = 1e-2
# "12p"; a later level's twin of a level-1 task carries its level: "l2-8p" (the public suite's
# level 2 reuses the numbers 1p-11p for the tasks whose hand-tuned Pallas kernel became the baseline)
_ID_RE = re.compile(r"^(?:l([2-9])-)?([1-9][0-9]{0,2})([a-z])$")
# what a Pallas baseline needs to run (Workload.platforms); a TPU kernel also runs on the cpu target,
# through the generic interpreter, as every candidate's kernel does there
PLATFORMS = ("cpu", "tpu", "gpu")
# a level's Pallas TPU baseline: where it runs, and why (Workload.platforms, platform_note)
PALLAS_TPU = ("cpu", "tpu")
PALLAS_TPU_NOTE = (
    "the baseline is a Pallas TPU (Mosaic) kernel: it runs on a TPU, or on the cpu target through JAX's "
    "Pallas interpreter as every candidate's kernel does there; it has no GPU lowering"
)


def split_case(case: str) -> tuple[str, str | None]:
    """``"small/b4_s512"`` -> ``("small", "b4_s512")``; ``"small"`` -> ``("small", None)``."""
    profile, _, name = case.partition(CASE_SEP)
    return profile, (name or None)


@dataclasses.dataclass(frozen=True)
class Workload:
    id: str  # "12p", "18k"
    slug: str  # "12p-rmsnorm"
    public_name: str  # the public suite's folder name, "12p_RMSNorm"
    title: str
    source: str  # one of SOURCES
    model: str  # model family, or "KernelBench L2" for 18k-50k
    category: str  # one of CATEGORIES
    description: str
    input_names: tuple[str, ...]
    profiles: Mapping[str, Mapping[str, Any]]
    create_inputs_fn: Callable[..., tuple]
    reference: Callable[..., Any]
    cost_fn: Callable[[Mapping[str, Any]], tuple[int, int]]
    expert: bool = False
    kernelbench_id: int | None = None
    # Set (with the reason) where the original problem's computation is degenerate; the
    # audit tests then assert exactly this degeneracy (WORKLOADS.md, "the policy").
    degenerate: str | None = None
    # Only with a documented reason; the leaderboard shows overrides.
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    tolerance_reason: str | None = None
    # Inputs the no-op audit may skip: integer index/length inputs, or inputs the documented
    # degeneracy makes irrelevant.
    insensitive_inputs: tuple[str, ...] = ()
    notes: str = ""
    # Set only where the public suite's baseline.py cannot run unchanged as a candidate here
    # because it is broken in the public harness itself: what fails, and what to change. Every
    # other public file runs unchanged at every profile (tests/jaxbench/workloads/test_public_files.py).
    public_file_note: str | None = None
    # The human version number, declared in the module and bumped whenever ``content_hash``
    # changes; the hash it was last bumped for is recorded in versions.py (a test checks both).
    version: int = 1
    # Level 1: the public suite's 50 workloads; level 2 onwards: later sets (DESIGN.md, "Levels").
    level: int = 1
    # Several input configurations per profile: {profile: {name: values over the profile's}}, the
    # same names in every profile. Each configuration is checked and timed on its own; the
    # workload is correct only when every one is, and its speedup is their geometric mean
    # (jaxbench/verdict/configurations.py). Empty: one configuration, the profile itself.
    configurations: Mapping[str, Mapping[str, Mapping[str, Any]]] = dataclasses.field(default_factory=dict)
    # The public suite file this workload matches, at the newest commit of it that we match, and
    # every deliberate departure from that file with its reason (upstream.py; () for none). Level
    # 1 declares both in each module; a later level has no public file (None).
    upstream: Upstream | None = None
    deviations: tuple[Deviation, ...] = ()
    # Level 2: the program timed as the baseline, a Pallas kernel taking the reference's inputs and
    # keyword-only values (the public suite's level 2 measures against hand-tuned Pallas, not
    # XLA). The reference stays the definition: the exact answer, XLA's allowance and the FLOPs
    # of the Pallas share come from it. None: the reference under XLA is the baseline.
    pallas_baseline: Callable[..., Any] | None = None
    # The platforms the baseline runs on (a Pallas TPU baseline: a TPU, or the cpu target through
    # the interpreter) and, where narrower, why; the intake refuses the others with the reason.
    platforms: tuple[str, ...] = PLATFORMS
    platform_note: str = ""

    def __post_init__(self):
        m = _ID_RE.match(self.id)
        if not m:
            raise ValueError(f"bad workload id {self.id!r}")
        if self.level not in LEVELS:
            raise ValueError(f"{self.id}: unknown level {self.level!r}; have {LEVELS}")
        prefix, number, letter = m.group(1), int(m.group(2)), m.group(3)
        if prefix is not None:
            if int(prefix) != self.level or number > LEVEL_ONE_SIZE:
                raise ValueError(
                    f"{self.id}: only a level-{prefix} twin of a level-1 task (1-{LEVEL_ONE_SIZE}) "
                    f"carries the prefix l{prefix}-, and it declares level={prefix}"
                )
        elif (number <= LEVEL_ONE_SIZE) != (self.level == 1):
            raise ValueError(
                f"{self.id}: level 1 numbers 1-{LEVEL_ONE_SIZE}, later levels from {LEVEL_ONE_SIZE + 1} "
                f"(or l{self.level}-<level-1 ID> for a twin of a level-1 task)"
            )
        if not self.platforms or set(self.platforms) - set(PLATFORMS):
            raise ValueError(f"{self.id}: platforms must be a non-empty subset of {PLATFORMS}")
        if tuple(self.platforms) != PLATFORMS and not self.platform_note:
            raise ValueError(f"{self.id}: a narrower set of platforms needs platform_note")
        if self.source in ID_LETTERS and letter != ID_LETTERS[self.source]:
            raise ValueError(f"{self.id}: a {self.source} workload's ID ends with {ID_LETTERS[self.source]!r}")
        if not self.slug.startswith(self.id + "-"):
            raise ValueError(f"slug {self.slug!r} must start with {self.id}-")
        if self.source not in SOURCES:
            raise ValueError(f"{self.id}: unknown source {self.source!r}")
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.id}: unknown category {self.category!r}")
        if set(self.profiles) != set(PROFILES):
            raise ValueError(f"{self.id}: profiles must be exactly {PROFILES}")
        if (self.atol, self.rtol) != (DEFAULT_ATOL, DEFAULT_RTOL) and not self.tolerance_reason:
            raise ValueError(f"{self.id}: a tolerance override needs tolerance_reason")
        if not isinstance(self.version, int) or self.version < 1:
            raise ValueError(f"{self.id}: version must be an integer >= 1")
        if self.upstream is not None and not isinstance(self.upstream, Upstream):
            raise TypeError(f"{self.id}: upstream must be an Upstream")
        check_deviations(self.deviations)
        if self.configurations:
            if set(self.configurations) != set(PROFILES):
                raise ValueError(f"{self.id}: configurations must be given for exactly {PROFILES}")
            names = [tuple(self.configurations[p]) for p in PROFILES]
            if not names[0] or any(n != names[0] for n in names):
                raise ValueError(f"{self.id}: every profile needs the same configuration names, in order")
            bad = [n for n in names[0] if not _CONFIG_NAME_RE.match(n)]
            if bad:
                raise ValueError(f"{self.id}: bad configuration names {bad} (lower case, digits, _ . -)")

    @functools.cached_property
    def content_hash(self) -> str:
        """What defines this workload, hashed: see :func:`.versions.content_hash`."""
        from .versions import content_hash  # deferred: versions imports this module

        return content_hash(self)

    @property
    def number(self) -> int:
        """The number within its level (``l2-8p`` -> 8)."""
        m = _ID_RE.match(self.id)
        assert m is not None  # checked in __post_init__
        return int(m.group(2))

    @property
    def order(self) -> tuple[int, int]:
        """Where the workload sorts: by level, then number (a level's twins before its new tasks)."""
        return (self.level, self.number)

    @property
    def bare_id(self) -> str:
        """The ID without its level prefix, as the public suite numbers it (``l2-8p`` -> ``8p``)."""
        return self.id.rpartition("-")[2]

    def timed_baseline(self, profile: str) -> Callable[..., Any]:
        """What is timed beside a candidate: the Pallas baseline with the case's static values
        bound where the workload has one, else :meth:`baseline` (the reference under XLA)."""
        if self.pallas_baseline is None:
            return self.baseline(profile)
        return functools.partial(self.pallas_baseline, **self.static_params(profile))

    def configuration_names(self, profile: str) -> tuple[str, ...]:
        """The configurations of ``profile`` (a plain profile name); () for a one-configuration workload."""
        if profile not in self.profiles:
            raise KeyError(f"{self.id}: no profile {profile!r}; have {sorted(self.profiles)}")
        return tuple(self.configurations.get(profile, ()))

    def cases(self, profile: str) -> tuple[str, ...]:
        """What the harness runs for ``profile``: the profile itself, or ``profile/configuration``
        for each configuration. Every harness call takes one case as its ``profile``."""
        names = self.configuration_names(profile)
        return tuple(f"{profile}{CASE_SEP}{n}" for n in names) if names else (profile,)

    def config(self, profile: str) -> dict:
        """The parameter dict of one case: a profile (one-configuration workloads) or
        ``profile/configuration``. A multi-configuration workload has no single dict per profile."""
        base, _, name = profile.partition(CASE_SEP)
        if base not in self.profiles:
            raise KeyError(f"{self.id}: no profile {base!r}; have {sorted(self.profiles)}")
        configs = self.configurations.get(base, {})
        if not name and configs:
            raise KeyError(
                f"{self.id}: profile {base!r} has {len(configs)} configurations: name one, "
                f"e.g. {base}{CASE_SEP}{next(iter(configs))}"
            )
        if name and name not in configs:
            raise KeyError(f"{self.id}: no configuration {name!r} in profile {base!r}; have {list(configs)}")
        return {**self.profiles[base], **configs.get(name, {})}

    def static_params(self, profile: str) -> dict:
        """The profile values that the reference takes as keyword-only arguments."""
        cfg = self.config(profile)
        names = [
            p.name
            for p in inspect.signature(self.reference).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        ]
        missing = [n for n in names if n not in cfg]
        if missing:
            raise KeyError(f"{self.id}: profile {profile!r} lacks {missing}")
        return {n: cfg[n] for n in names}

    def baseline(self, profile: str) -> Callable[..., Any]:
        """``workload(*inputs)`` with the static values bound: what XLA is timed on."""
        return functools.partial(self.reference, **self.static_params(profile))

    def exact(self, profile: str) -> Callable[..., Any]:
        """The high-precision answer for the same bf16 inputs: the reference with every floating
        input widened to float32 and matmuls at full precision, so no bf16 rounding happens
        anywhere inside (every reference is dtype-generic: a test walks each jaxpr for bf16).
        Correctness is judged against this, with XLA's own distance from it as the allowance."""
        import jax  # deferred: the portal reads workload metadata without JAX
        import jax.numpy as jnp  # deferred: the portal reads workload metadata without JAX

        base = self.baseline(profile)

        def exact(*inputs):
            wide = [x.astype(jnp.float32) if jnp.issubdtype(x.dtype, jnp.floating) else x for x in inputs]
            with jax.default_matmul_precision("highest"):
                out = base(*wide)
            return jax.tree_util.tree_map(
                lambda y: y.astype(jnp.float32) if jnp.issubdtype(y.dtype, jnp.floating) else y, out
            )

        return exact

    def create_inputs(self, profile: str, key) -> tuple:
        import jax  # deferred: the portal reads workload metadata without JAX

        if isinstance(key, int):
            key = jax.random.key(key)
        return tuple(self.create_inputs_fn(self.config(profile), key))

    def input_specs(self, profile: str):
        """ShapeDtypeStructs of the inputs, without creating them. The key too stays abstract: a
        concrete one would open JAX's default backend in this process (on a TPU VM the chip,
        which one process at a time can hold: a web server showing a starter file, or a worker,
        would lock every timer child out)."""
        import jax  # deferred: the portal reads workload metadata without JAX

        return jax.eval_shape(lambda: self.create_inputs(profile, jax.random.key(0)))

    def output_spec(self, profile: str):
        import jax  # deferred: the portal reads workload metadata without JAX

        return jax.eval_shape(self.baseline(profile), *self.input_specs(profile))

    def cost(self, profile: str) -> tuple[int, int]:
        flops, nbytes = self.cost_fn(self.config(profile))
        return int(flops), int(nbytes)

    def summary(self) -> dict:
        """JSON-ready metadata, used by the CLI, the registry sync and the API."""
        out = {}
        for name in (
            "id",
            "slug",
            "public_name",
            "title",
            "source",
            "model",
            "category",
            "description",
            "expert",
            "kernelbench_id",
            "degenerate",
            "atol",
            "rtol",
            "tolerance_reason",
            "notes",
            "public_file_note",
            "platform_note",
        ):
            out[name] = getattr(self, name)
        out["version"] = self.version
        out["content_hash"] = self.content_hash
        out["level"] = self.level
        out["configurations"] = {
            p: {n: dict(v) for n, v in self.configurations[p].items()} for p in self.configurations
        }
        out["platforms"] = list(self.platforms)
        out["pallas_baseline"] = self.pallas_baseline is not None
        out["input_names"] = list(self.input_names)
        out["profiles"] = {p: dict(self.profiles[p]) for p in PROFILES}
        out["upstream"] = self.upstream.summary() if self.upstream else None
        out["deviations"] = [d.summary() for d in self.deviations]
        return out
