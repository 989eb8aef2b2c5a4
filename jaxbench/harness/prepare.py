"""Preparing an evaluation on the trusted side: its own JAX (pinned to the CPU), the input sets,
the XLA reference's and the exact answers, the exported baseline and the reference's FLOPs,
the files a child reads, the sizes and limits of its sandbox, and the target it runs on."""

from __future__ import annotations

import importlib.util
import os
import secrets
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import arrays
from .. import hardware as hw
from ..profiling import cpu_twin, hlo_cost
from ..sandbox.options import Limits
from ..workloads.base import Workload
from . import xla_cache
from .settings import (
    DEFAULT_TIMEOUTS,
    N_CHECK_SETS,
    N_TIMING_SETS,
    PUBLIC_SEEDS,
    SET_BUDGET_BYTES,
    TRACE_CAP,
    InfrastructureError,
)

# --------------------------------------------------------------------------- trusted JAX

# what jax.export imports when it first serializes a program, which jaxlib does not install: a
# preinstalled JAX (a TPU VM image's, 2026-12-08) came without it, and every evaluation then
# failed with an ImportError from inside the export
EXPORT_PACKAGES = ("flatbuffers",)


def missing_packages() -> list[str]:
    """The packages the harness needs beside JAX that this Python cannot import (looked up, not
    imported)."""
    return [name for name in EXPORT_PACKAGES if importlib.util.find_spec(name) is None]


def packages_problem() -> str | None:
    """Why this Python cannot run the harness (a missing package), or None."""
    missing = missing_packages()
    if not missing:
        return None
    return (
        f"this Python cannot import {', '.join(missing)}, which jax.export needs to serialize programs "
        "(a preinstalled JAX may come without it): install the version requirements.txt pins"
    )


_JAX_LOCK = threading.RLock()
_FN_CACHE: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}


def trusted_jax() -> Any:
    """JAX for the trusted side's own work (inputs, references), pinned to the CPU so that
    the worker never holds the accelerator its children need."""
    import jax  # deferred: JAX loads only when this runs, not when the module is imported

    try:
        from jax._src import xla_bridge  # deferred: JAX loads only when this runs, not when the module is imported

        initialised = bool(getattr(xla_bridge, "_backends", None))
    except Exception:  # noqa: BLE001
        initialised = True
    if not initialised and not os.environ.get("JAX_PLATFORMS"):
        jax.config.update("jax_platforms", "cpu")
    xla_cache.enable(jax)  # once per process: compiled programs kept on disk for the next
    return jax


def checked_jax() -> Any:
    """:func:`trusted_jax` at the start of an evaluation, a baseline or a pre-check: a Python
    that lacks a package the harness needs is refused with why (an infrastructure error) before
    any child starts."""
    problem = packages_problem()
    if problem:
        raise InfrastructureError(problem)
    return trusted_jax()


def cpu_device() -> Any:
    jax = trusted_jax()
    return jax.devices("cpu")[0]


def _key(seed: int) -> Any:
    jax = trusted_jax()
    data = np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], dtype=np.uint32)
    return jax.random.wrap_key_data(data)


def _fns(wl: Workload, profile: str) -> tuple[Any, Any, Any]:
    """(create inputs, XLA reference, exact answer), jitted once per process."""
    jax = trusted_jax()
    k = (wl.id, wl.reference, profile)
    if k not in _FN_CACHE:
        create = jax.jit(lambda key: tuple(wl.create_inputs(profile, key)))
        ref = jax.jit(wl.baseline(profile))
        exact = jax.jit(wl.exact(profile))
        _FN_CACHE[k] = (create, ref, exact)
    return _FN_CACHE[k]


_EXPORT_CACHE: dict[tuple[Any, ...], bytes] = {}


class PlatformUnsupported(ValueError):
    """The workload's baseline does not run on this platform (``Workload.platforms``)."""


def require_platform(wl: Workload, platform: str) -> None:
    """Raise :class:`PlatformUnsupported`, with the workload's reason, unless it runs on ``platform``."""
    if platform not in wl.platforms:
        raise PlatformUnsupported(
            f"workload {wl.id} runs on {', '.join(wl.platforms)} only, not {platform}: {wl.platform_note}"
        )


def exported_baseline(wl: Workload, profile: str, platform: str, device_kind: str | None = None) -> bytes:
    """The baseline timed beside a candidate, serialized with ``jax.export`` for ``platform`` at
    ``profile``'s shapes: what a baseline child deserializes, compiles and times. No reference
    source reaches any child, and the baseline timed beside a candidate is exactly this program.
    The reference under XLA, or a level's Pallas baseline (``Workload.timed_baseline``): lowered
    for the chip (``device_kind``), and on the cpu target through JAX's generic Pallas
    interpreter, as a candidate's kernels run there, so both sides of a ratio are interpreted."""
    require_platform(wl, platform)
    pallas = wl.pallas_baseline is not None
    k = (wl.id, wl.reference, wl.pallas_baseline, profile, platform, device_kind if pallas else None)
    if k not in _EXPORT_CACHE:
        _EXPORT_CACHE[k] = _export(wl.timed_baseline(profile), wl, profile, platform, pallas, device_kind)
    return _EXPORT_CACHE[k]


def exported_reference(wl: Workload, profile: str, platform: str) -> bytes:
    """The reference under XLA, exported as :func:`exported_baseline` (the same bytes where the
    reference is the baseline): what the FLOPs of the Pallas share are counted on."""
    if wl.pallas_baseline is None and platform in wl.platforms:
        return exported_baseline(wl, profile, platform)
    k = (wl.id, wl.reference, "reference", profile, platform)
    if k not in _EXPORT_CACHE:
        _EXPORT_CACHE[k] = _export(wl.baseline(profile), wl, profile, platform, False, None)
    return _EXPORT_CACHE[k]


def _export(fn: Any, wl: Workload, profile: str, platform: str, kernels: bool, device_kind: str | None) -> bytes:
    """``fn`` exported for ``platform``; ``kernels``: it holds Pallas kernels (a Pallas baseline)."""
    jax = trusted_jax()
    with _JAX_LOCK:
        specs = specs_of(wl, profile)[0]
        if kernels and platform != "cpu":
            # the trusted side's JAX is pinned to the CPU: the kernel is lowered for an abstract
            # chip of the target, as the export child lowers a candidate's
            from jax.sharding import AbstractDevice, AbstractMesh  # deferred: JAX loads only here

            dev = AbstractDevice(device_kind=device_kind or "TPU v6 lite", num_cores=1, platform=platform)
            with jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("_target",), abstract_device=dev)):
                exp = jax.export.export(jax.jit(fn), platforms=[hw.export_platform(platform)])(*specs)
        elif kernels:
            exp = _interpreted_export(jax, fn, specs)
        else:
            exp = jax.export.export(jax.jit(fn), platforms=[hw.export_platform(platform)])(*specs)
        return bytes(exp.serialize())


def _interpreted_export(jax: Any, fn: Any, specs: Sequence[Any]) -> Any:
    """``fn`` exported for the cpu with every ``pallas_call`` lowered through JAX's generic Pallas
    interpreter: the lowering a candidate's kernel gets there (``cpu_twin``), applied to a
    baseline's kernels by overriding the primitive's lowering rule for this one export."""
    # deferred, and internal APIs of the pinned JAX: the public export takes no lowering rules
    from jax._src.export import _export as jexport  # deferred: as above
    from jax._src.interpreters import mlir  # deferred: as above
    from jax._src.pallas import pallas_call as pc  # deferred: as above

    def interpreted(ctx: Any, *args: Any, **params: Any) -> Any:
        return pc._pallas_call_lowering(ctx, *args, **dict(params, interpret=True))

    traced = jax.jit(fn).trace(*specs)
    lowered = traced.lower(
        lowering_platforms=("cpu",),
        _private_parameters=mlir.LoweringParameters(
            override_lowering_rules=((pc.pallas_call_p, interpreted),), for_export=True, hoist_constants_as_args=False
        ),
    )
    return jexport._export_lowered(lowered, traced.jaxpr, traced.fun_name)


_REF_HLO_CACHE: dict[tuple[Any, ...], dict[str, Any]] = {}


def reference_hlo_cost(wl: Workload, profile: str, platform: str = "tpu") -> dict[str, Any]:
    """The workload's FLOPs as ``hlo_cost`` counts them in the exported reference
    (:func:`exported_reference` for ``platform``, deserialized here): the denominator of the
    share of FLOPs outside Pallas when the numerator is the candidate's exported artifact
    (``pallas_share.assess_artifact``), so that both come from one representation. The TPU
    export by default: the CPU target's share is measured on the candidate's TPU export."""
    k = (wl.id, wl.reference, profile, platform)
    if k not in _REF_HLO_CACHE:
        data = exported_reference(wl, profile, platform)
        with _JAX_LOCK:
            _REF_HLO_CACHE[k] = hlo_cost.facts_from_bytes(data)
    return _REF_HLO_CACHE[k]


def write_input(in_dir: str, name: str, data: str | bytes) -> None:
    """One file of the child's input directory (which the child sees read-only)."""
    path = os.path.join(in_dir, name)
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    os.chmod(path, 0o644)


def write_artifact_model(in_dir: str) -> None:
    """What a timer child applies to an exported program before any of it runs: the trusted
    side's description of it (``hlo_cost.py``: signature, custom calls, kernels, FLOPs)."""
    with open(hlo_cost.__file__, encoding="utf-8") as src:
        write_input(in_dir, "hlo_cost.py", src.read())


def write_twin_builder(in_dir: str) -> None:
    """What a cpu-target timer builds the program it runs with: the judged TPU program with each
    kernel replaced by its interpretation (``cpu_twin.py``, the trusted side's)."""
    with open(cpu_twin.__file__, encoding="utf-8") as src:
        write_input(in_dir, "cpu_twin.py", src.read())


def inputs_from_seed(workload: Any, profile: str, seed: str | int) -> tuple[np.ndarray, ...]:
    """Rebuild one recorded input set (``seed``: the hex string of the record, or an int)."""
    wl = workload_of(workload)
    seed = int(seed, 16) if isinstance(seed, str) else int(seed)
    jax = trusted_jax()
    with jax.default_device(cpu_device()):
        create = _fns(wl, profile)[0]
        return tuple(np.asarray(a) for a in create(_key(seed)))


class Prepared:
    """Input sets, the XLA reference outputs and the exact answers, all computed on the
    trusted side. Every set (check and timing) is checked; timing sets are also timed."""

    def __init__(self, wl: Workload, profile: str, n_check: int, n_timing: int) -> None:
        jax = trusted_jax()
        self.wl, self.profile = wl, profile
        self.check_ids = [f"s{i}" for i in range(n_check)]
        self.timing_ids = [f"s{n_check + i}" for i in range(n_timing)]
        self.all_ids = self.check_ids + self.timing_ids
        self.seeds = {sid: secrets.randbits(64) for sid in self.all_ids}
        self.inputs: dict[str, list[np.ndarray]] = {}
        self.refs: dict[str, list[np.ndarray]] = {}
        self.exact: dict[str, list[np.ndarray]] = {}
        with _JAX_LOCK, jax.default_device(cpu_device()):
            create, ref, exact = _fns(wl, profile)
            for sid, seed in self.seeds.items():
                xs = create(_key(seed))
                self.inputs[sid] = [np.asarray(x) for x in xs]
                leaves, treedef = jax.tree_util.tree_flatten(ref(*xs))
                self.refs[sid] = [np.asarray(x) for x in leaves]
                self.treedef = str(treedef)
                self.exact[sid] = [np.asarray(x) for x in jax.tree_util.tree_leaves(exact(*xs))]
        self.input_specs = manifest_specs(wl, self.inputs[self.all_ids[0]])
        r0 = self.refs[self.all_ids[0]]
        self.out_specs = [(arrays.dtype_name(r.dtype), tuple(r.shape)) for r in r0]

    def extra_refs(self) -> dict[str, tuple[list[np.ndarray], list[np.ndarray]]]:
        """(exact, XLA) answers for the fixed public keys (memorisation check), on demand."""
        jax = trusted_jax()
        out = {}
        with _JAX_LOCK, jax.default_device(cpu_device()):
            create, ref, exact = _fns(self.wl, self.profile)
            for s in PUBLIC_SEEDS:
                xs = create(jax.random.key(s))
                out[f"jax.random.key({s})"] = (
                    [np.asarray(x) for x in jax.tree_util.tree_leaves(exact(*xs))],
                    [np.asarray(x) for x in jax.tree_util.tree_leaves(ref(*xs))],
                )
        return out

    def seeds_hex(self) -> dict[str, list[str]]:
        return {
            "check": [f"{self.seeds[s]:016x}" for s in self.check_ids],
            "timing": [f"{self.seeds[s]:016x}" for s in self.timing_ids],
        }

    def write_manifest(self, in_dir: str) -> None:
        arrays.write_manifest(in_dir, self.input_specs)

    def write_sets(self, in_dir: str, set_ids: list[str]) -> None:
        """Input sets reach the child only when the phase that uses them starts: the program is
        compiled (and the candidate's module imported) before any input value exists there."""
        arrays.write_sets(in_dir, {sid: self.inputs[sid] for sid in set_ids})

    @property
    def set_bytes(self) -> int:
        return sum(a.nbytes for a in self.inputs[next(iter(self.inputs))])


def _input_names(wl: Workload, n: int) -> list[str]:
    names = list(getattr(wl, "input_names", ()) or ())
    return names + [f"arg{i}" for i in range(len(names), n)]


def manifest_specs(wl: Workload, xs: Sequence[Any]) -> list[dict[str, Any]]:
    """The manifest's entry (name, dtype, shape) of each input (arrays or ShapeDtypeStructs)."""
    return [
        {"name": n, "dtype": arrays.dtype_name(x.dtype), "shape": list(x.shape)}
        for n, x in zip(_input_names(wl, len(xs)), xs)
    ]


def workload_of(workload: Any) -> Workload:
    if isinstance(workload, Workload):
        return workload
    from .. import workloads  # deferred: the registry imports JAX

    return workloads.get(str(workload))


_SPEC_CACHE: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[Any, ...]]] = {}


def specs_of(wl: Workload, profile: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(input ShapeDtypeStructs, output leaves' ShapeDtypeStructs), cached per process."""
    k = (wl.id, wl.reference, profile)
    if k not in _SPEC_CACHE:
        jax = trusted_jax()
        with _JAX_LOCK:
            ins = tuple(wl.input_specs(profile))
            outs = tuple(jax.tree_util.tree_leaves(jax.eval_shape(wl.baseline(profile), *ins)))
        _SPEC_CACHE[k] = (ins, outs)
    return _SPEC_CACHE[k]


def _nbytes(spec: Any) -> int:
    return int(np.prod(spec.shape, dtype=np.int64)) * int(np.dtype(spec.dtype).itemsize)


def set_counts(wl: Workload, profile: str) -> tuple[int, int]:
    specs = specs_of(wl, profile)[0]
    per_set = sum(_nbytes(s) for s in specs)
    n_check, n_timing = N_CHECK_SETS, N_TIMING_SETS
    while (n_check + n_timing) * per_set > SET_BUDGET_BYTES and (n_check > 2 or n_timing > 2):
        if n_check >= n_timing and n_check > 2:
            n_check -= 1
        elif n_timing > 2:
            n_timing -= 1
    return n_check, n_timing


def limits_for(wl: Workload, profile: str, platform: str, n_sets: int) -> Limits:
    specs, out_leaves = specs_of(wl, profile)
    in_bytes = sum(_nbytes(s) for s in specs)
    out_bytes = sum(_nbytes(s) for s in out_leaves)
    big = max([out_bytes] + [_nbytes(s) for s in out_leaves])
    lim = Limits()
    # Interpret-mode Pallas materialises blocks on the host: paged attention needs > 4 GiB.
    lim.memory_bytes = int(max(6 << 30, 3 * n_sets * (in_bytes + out_bytes) + (3 << 30)))
    lim.file_bytes = int(max(TRACE_CAP, big + (1 << 20)))
    lim.work_bytes = int(TRACE_CAP + (n_sets + N_TIMING_SETS) * out_bytes + (256 << 20))
    if platform != "cpu":
        lim.pids = 2048
        lim.nproc = 4096
    return lim


def resolve_timeouts(overrides: Mapping[str, float] | None) -> dict[str, float]:
    t = dict(DEFAULT_TIMEOUTS)
    for k, v in (overrides or {}).items():
        if k not in t:
            raise ValueError(f"unknown timeout phase {k!r}; known: {sorted(t)}")
        t[k] = float(v)
    return t


def target_of(hardware: Any, hello: Mapping[str, Any]) -> hw.Target:
    platform = str(hello.get("platform"))
    if hardware is None:
        slug = hw.slug_for_device_kind(platform, hello.get("device_kind", ""))
        target = hw.TARGETS.get(slug) or hw.Target(slug, hello.get("device_kind", slug), platform, "full", 0.0, 0.0)
    else:
        target = hardware if isinstance(hardware, hw.Target) else hw.get_target(hardware)
    if target.platform != platform:
        raise InfrastructureError(
            f"the child's JAX runs on {platform!r}, the target {target.slug} needs {target.platform!r}"
        )
    return target
