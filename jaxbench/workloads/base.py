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

SOURCES = ("maxtext", "kernelbench-l2")
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
DEFAULT_ATOL = 1e-2
DEFAULT_RTOL = 1e-2
_ID_RE = re.compile(r"^([1-9]|[1-4][0-9]|50)[pk]$")


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

    def __post_init__(self):
        if not _ID_RE.match(self.id):
            raise ValueError(f"bad workload id {self.id!r}")
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

    @functools.cached_property
    def content_hash(self) -> str:
        """What defines this workload, hashed: see :func:`.versions.content_hash`."""
        from .versions import content_hash  # deferred: versions imports this module

        return content_hash(self)

    @property
    def number(self) -> int:
        return int(self.id[:-1])

    def config(self, profile: str) -> dict:
        try:
            return dict(self.profiles[profile])
        except KeyError:
            raise KeyError(f"{self.id}: no profile {profile!r}; have {sorted(self.profiles)}") from None

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
        """ShapeDtypeStructs of the inputs, without creating them."""
        import jax  # deferred: the portal reads workload metadata without JAX

        return jax.eval_shape(lambda k: self.create_inputs(profile, k), jax.random.key(0))

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
        ):
            out[name] = getattr(self, name)
        out["version"] = self.version
        out["content_hash"] = self.content_hash
        out["input_names"] = list(self.input_names)
        out["profiles"] = {p: dict(self.profiles[p]) for p in PROFILES}
        return out
