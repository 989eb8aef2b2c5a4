"""A sandboxed child, in one of two roles; it writes only data.

This file is bound read-only into the sandbox on its own (not the repository, not the workload
registry, not the reference code; under bubblewrap it is ``/harness/sandbox_child.py``) and
imports only the standard library, numpy and jax, never a sibling module of its package. It is
started as ``python -I -S -B child_main.py --in DIR --work DIR --role ROLE [--site DIR]...``.

The two roles (TRUST.md 1: the candidate's Python never shares a process with a measurement):

* ``export``: the ONLY process that imports a candidate's module. No device (JAX on cpu, no
  device nodes), no input values: it gets the input shapes and the profile's static values,
  traces ``workload`` once and writes that trace's serialized program (``export_run``): the
  native lowering for the chip (a TPU's for the cpu target, plus each kernel alone through
  JAX's generic Pallas interpreter, from which the timer builds the cpu twin). The trusted
  side closes it, every process of it dead, before a timer starts.
* ``timer``: never imports candidate code and never receives any (no candidate file exists in
  its directories; ``load`` says so). It deserializes the exported programs (the baseline, the
  candidate's artifact), describes the artifact before any of it runs (``hlo_cost.py``, written
  by the trusted side), then compiles, checks and times them and writes the outputs and the
  profiler trace itself. The artifact is still untrusted device code: the timer stays
  sandboxed and serves one candidate.

Protocol (everything here is data; the trusted side decides every verdict):

* fd 3 (replies): one JSON object per line. The first line is ``hello`` (platform, device kind,
  versions), sent after JAX is imported and warmed up and before any candidate code or program
  exists in this process.
* The device (timer only): opened (backend initialised, a warm-up jit) at start, and described
  in hello; with ``--lazy-device`` (exclusive devices: one process per TPU chip or GPU) only on
  the ``open`` command, which the trusted side sends once it holds the device's lock
  (``jaxbench/sandbox/device.py``); the reply ``device`` carries what hello would have. With
  ``--fake-device DIR`` (the simulated exclusive device of the tests) opening the device first
  takes ``DIR/node`` with a non-blocking exclusive flock and fails loudly when another process
  holds it, as libtpu does.
* fd 0 (commands): one JSON object per line. Export: ``job`` then ``export_run``. Timer:
  ``open`` (lazy device only), ``job`` (program names chosen by the harness; the baseline is
  compiled here), ``load`` (the candidate's artifact and its facts), ``compile``, ``check``,
  ``timing`` (with the block order drawn by the trusted side). Then ``exit``. The trusted side
  sends a phase only when the previous one passed, and times every phase with its own clock.
* Inputs: ``<in>/manifest.json`` (dtypes, shapes, file names) and ``<in>/sets/<set>/<k>.npy``;
  bfloat16 arrays are stored as their raw uint16 bits. Loaded with ``allow_pickle=False``.
* Outputs: ``<work>/artifacts/*.jaxexport`` (export); ``<work>/out/<tag>/<k>.npy`` (bfloat16
  again as uint16: every checked output, and every timed output whose hash differs from the
  checked output of its inputs), the profiler trace under ``<work>/trace`` (timer).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
import traceback
import types
from collections.abc import Callable, Sequence
from typing import Any, cast

# one JSON object of the protocol (a command received, a reply sent): data, read by key
Message = dict[str, Any]

STATUS_FD = 3
MAX_COMMAND = 1 << 20
MAX_TEXT = 4 << 20  # jaxpr / lowered text written for the trusted side's scan
CANDIDATE_FILE = "candidate.py"


def _parse_args(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "site": [],
        "in": None,
        "work": None,
        "probe": False,
        "lazy_device": False,
        "fake_device": None,
        "role": "timer",
    }
    it = iter(argv)
    for a in it:
        if a in ("--in", "--work", "--role"):
            opts[a[2:]] = next(it)
        elif a == "--site":
            opts["site"].append(next(it))
        elif a == "--probe":
            opts["probe"] = True
        elif a == "--lazy-device":
            opts["lazy_device"] = True
        elif a == "--fake-device":
            opts["fake_device"] = next(it)
    return opts


OPTS = _parse_args(sys.argv[1:])
# export: the only role that imports candidate code (no device, no inputs; it writes programs);
# timer: runs exported programs only (the baseline, the candidate's artifact), never a .py of theirs
ROLE = OPTS["role"] if OPTS["role"] in ("export", "timer") else "timer"
# Libraries that parse flags from sys.argv on first use (absl, hence tokamax) must not see ours.
sys.argv = [sys.argv[0]]
for _p in reversed(OPTS["site"]):
    sys.path.insert(0, _p)

_status = os.fdopen(STATUS_FD, "w", buffering=1, closefd=False)
# What the candidate prints reaches the trusted side's capture (the record's output, the run
# log) line by line: the child ends with os._exit, which flushes no block-buffered pipe.
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass

import faulthandler  # noqa: E402
import signal as _signal  # noqa: E402

faulthandler.register(_signal.SIGUSR1, all_threads=True)  # stacks to stderr on request


def send(obj: Message) -> None:
    _status.write(json.dumps(obj, default=str) + "\n")
    _status.flush()


if OPTS["probe"]:
    # a sandbox probe: the interpreter starts, the packages are reachable, the work dir is
    # writable; JAX itself is not initialised (that is what a real child's hello proves)
    import jaxlib  # noqa: F401
    import numpy  # noqa: F401

    with open(os.path.join(OPTS["work"], ".probe"), "w") as _f:
        _f.write("ok")
    send({"type": "hello", "probe": True, "uid": os.getuid()})
    os._exit(0)


def recv() -> Message:
    line = sys.stdin.buffer.readline(MAX_COMMAND)
    if not line:
        raise SystemExit(0)
    cmd: Message = json.loads(line)
    return cmd


# --------------------------------------------------------------------------- JAX, warmed up

_t_import = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_compilation_cache", False)
_pltpu: types.ModuleType | None
try:
    from jax.experimental import pallas as _pl  # noqa: F401 - loaded early: its import errors show in hello
    from jax.experimental.pallas import tpu as _pltpu
except Exception:  # noqa: BLE001 - pallas missing is reported in hello
    _pltpu = None

_BF16 = np.dtype(jnp.bfloat16)
_dev: Any = None  # the device, once opened (_open_device)


def _profiler_options() -> Any:
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0  # the Python tracer multiplies the trace size by ~15
    opts.host_tracer_level = 1  # level 1 keeps the XLA runtime's thunk events
    return opts


class _Profiler:
    """A profiler session whose serialised XSpace is written by this module itself (no
    TensorBoard export, no trace.json conversion: several times faster than stop_trace)."""

    def __init__(self) -> None:
        self.session: Any = None
        self.log_dir: str | None = None
        try:
            from jax._src.lib import (
                _profiler as _p,  # deferred: an internal JAX API; if it moves, only this feature fails
            )

            self._cls = _p.ProfilerSession
        except Exception:  # noqa: BLE001 - fall back to the public API
            self._cls = None

    def start(self, log_dir: str) -> None:
        self.log_dir = log_dir
        if self._cls is not None:
            self.session = self._cls(_profiler_options())
        else:
            jax.profiler.start_trace(log_dir, profiler_options=_profiler_options())

    def stop(self) -> None:
        if self._cls is None:
            jax.profiler.stop_trace()
            return
        data = self.session.stop()
        self.session = None
        d = os.path.join(cast(str, self.log_dir), "plugins", "profile", "run")  # set by start()
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "child.xplane.pb"), "wb") as f:
            f.write(data)


def _warm_profiler() -> None:
    d = "/tmp/.warm-trace" if os.path.isdir("/tmp") else os.path.join(OPTS["work"], ".warm")
    try:
        prof = _Profiler()
        prof.start(d)
        jax.jit(lambda a: a + 1)(jnp.zeros(4)).block_until_ready()
        prof.stop()
    except Exception:  # noqa: BLE001
        pass
    shutil.rmtree(d, ignore_errors=True)


_import_s = time.perf_counter() - _t_import

# --------------------------------------------------------------------------- the device

_CHILD_ID = os.urandom(4).hex()  # tells children apart in the simulated device's log (pids repeat)
_fake_fd: int | None = None


def _fake_log(event: str) -> None:
    """One line per open/release of the simulated device: written after taking it and before
    releasing it, so logged intervals lie inside the real holds."""
    line = f"{event} {time.time_ns()} {os.getpid()} {_CHILD_ID}\n".encode()
    fd = os.open(os.path.join(OPTS["fake_device"], "log"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _take_fake_device() -> None:
    import fcntl  # deferred: only the simulated device needs it

    global _fake_fd
    fd = os.open(os.path.join(OPTS["fake_device"], "node"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        os.close(fd)
        raise RuntimeError(f"device busy: held by {holder or 'another process'}") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} (child {_CHILD_ID})".encode(), 0)
    _fake_fd = fd
    _fake_log("open")


def _release_fake_device() -> None:
    global _fake_fd
    if _fake_fd is not None:
        _fake_log("close")
        os.close(_fake_fd)
        _fake_fd = None


def _open_device() -> float:
    """Initialise the backend on the device and warm it up (a jit, the profiler); returns the
    seconds it took."""
    global _dev
    t = time.perf_counter()
    if OPTS["fake_device"]:
        _take_fake_device()
    _dev = jax.devices()[0]
    jax.jit(lambda a: a * 2 + 1)(jnp.arange(8, dtype=jnp.float32)).block_until_ready()
    if ROLE == "timer":
        _warm_profiler()
    return time.perf_counter() - t


def _device_info() -> dict[str, Any]:
    return {
        "platform": _dev.platform,
        "device_kind": getattr(_dev, "device_kind", ""),
        "n_devices": len(jax.devices()),
    }


_open_s = None if OPTS["lazy_device"] else _open_device()

# --------------------------------------------------------------------------- helpers


def _dtype(name: str) -> np.dtype[Any]:
    return _BF16 if name == "bfloat16" else np.dtype(name)


def load_set(manifest: Message, set_id: str) -> list[Any]:
    arrays = []
    base = os.path.join(OPTS["in"], "sets", set_id)
    for k, spec in enumerate(manifest["inputs"]):
        raw = np.load(os.path.join(base, f"{k}.npy"), allow_pickle=False)
        if spec["dtype"] == "bfloat16":
            raw = raw.view(_BF16)
        arrays.append(jax.device_put(raw, _dev))
    return arrays


def input_specs(manifest: Message) -> list[Any]:
    return [jax.ShapeDtypeStruct(tuple(s["shape"]), _dtype(s["dtype"])) for s in manifest["inputs"]]


def write_outputs(tag: str, out: Any) -> dict[str, Any]:
    leaves, treedef = jax.tree_util.tree_flatten(out)
    d = os.path.join(OPTS["work"], "out", tag)
    os.makedirs(d, exist_ok=True)
    meta = []
    for k, leaf in enumerate(leaves):
        info = {
            "type": f"{type(leaf).__module__}.{type(leaf).__qualname__}",
            "is_jax_array": isinstance(leaf, jax.Array),
        }
        arr = np.asarray(leaf)
        info["dtype"] = "bfloat16" if arr.dtype == _BF16 else arr.dtype.name
        info["shape"] = list(arr.shape)
        if arr.dtype == _BF16:
            arr = arr.view(np.uint16)
        # ascontiguousarray returns at least 1-d: reshape keeps a scalar output (13p's loss) 0-d
        np.save(os.path.join(d, f"{k}.npy"), np.ascontiguousarray(arr).reshape(arr.shape), allow_pickle=False)
        meta.append(info)
    return {"treedef": str(treedef), "leaves": meta}


def _candidate_frames(tb: types.TracebackType | None) -> list[str]:
    lines = []
    for fs in traceback.extract_tb(tb):
        if os.path.basename(fs.filename) == CANDIDATE_FILE:
            lines.append(f"candidate.py:{fs.lineno} in {fs.name}: {(fs.line or '').strip()}")
    return lines[-3:]


def _pallas_related(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    if any(w in text for w in ("Pallas", "pallas", "Mosaic", "mosaic", "BlockSpec", "block shape")):
        return True
    for fs in traceback.extract_tb(exc.__traceback__):
        if "/pallas/" in fs.filename or "/mosaic/" in fs.filename:
            return True
    return False


def error_reply(stage: str, exc: BaseException) -> Message:
    msg = "".join(traceback.format_exception_only(type(exc), exc))
    return {
        "type": "error",
        "stage": stage,
        "exc_type": type(exc).__name__,
        "exc_module": type(exc).__module__,
        "missing_module": getattr(exc, "name", None) if isinstance(exc, ImportError) else None,
        "message": msg[:8000],
        "where": _candidate_frames(exc.__traceback__),
        "pallas": _pallas_related(exc),
    }


def _write_text(name: str, text: str) -> None:
    d = os.path.join(OPTS["work"], "compile")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        f.write(text[:MAX_TEXT])


_ARTIFACT_MODEL: types.ModuleType | None = None  # hlo_cost.py, once loaded (_load_cost_model)


def _load_by_path(filename: str) -> types.ModuleType | None:
    """A module of the trusted side's, written into the input directory (``hlo_cost.py``):
    loaded when the job arrives, before any candidate code or program exists in this process.
    None where the file is absent."""
    path = os.path.join(OPTS["in"], filename)
    if not os.path.exists(path):
        return None
    mod = types.ModuleType("jaxbench_" + filename[:-3])
    mod.__file__ = path
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), mod.__dict__)
    return mod


def _load_cost_model() -> None:
    global _ARTIFACT_MODEL
    if _ARTIFACT_MODEL is None and ROLE == "timer":
        _ARTIFACT_MODEL = _load_by_path("hlo_cost.py")


# --------------------------------------------------------------------------- the job


def _target_device(platform: str, device_kind: str | None) -> contextlib.AbstractContextManager[Any]:
    """Lower as if for one chip of the target (an abstract device: nothing runs on it), so that
    kernels which ask for the device's generation (Mosaic integer division, Tokamax pipelines,
    Triton's GPU description) lower in a process that has no such device."""
    if platform not in ("tpu", "gpu"):
        return contextlib.nullcontext()
    from jax.sharding import (  # deferred: an internal JAX API; if it moves, only this feature fails
        AbstractDevice,
        AbstractMesh,
    )

    if platform == "tpu":
        dev = AbstractDevice(device_kind=device_kind or "TPU v6 lite", num_cores=1, platform="tpu")
    else:
        dev = AbstractDevice(device_kind=device_kind or "", num_cores=None, platform="cuda")
    return jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("_target",), abstract_device=dev))


def _dtype_name(dt: Any) -> str:
    dt = np.dtype(dt)
    return "bfloat16" if dt == _BF16 else dt.name


def _deserialize(filename: str, max_bytes: int | None = None) -> Any:
    """A serialized ``jax.export`` program from the input directory (the baseline, or the
    candidate's artifact: untrusted data, read with a size cap)."""
    path = os.path.join(OPTS["in"], filename)
    size = os.path.getsize(path)
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"{filename} is {size} bytes, over the {max_bytes}-byte cap")
    with open(path, "rb") as f:
        return jax.export.deserialize(bytearray(f.read()))


def _facts(exp: Any, max_ops: int | None = None) -> dict[str, Any]:
    """What the trusted side verifies about an exported program, read from the program itself
    before any of it runs: its exact signature here, the rest (custom calls, kernels, FLOPs)
    from the trusted side's ``hlo_cost.py``; of a program above ``max_ops`` operations, only
    the count (the trusted side refuses it on that)."""
    facts: dict[str, Any] = {}
    if _ARTIFACT_MODEL is None:
        facts["error"] = "no artifact model (hlo_cost.py)"
    else:
        try:
            facts.update(_ARTIFACT_MODEL.artifact_facts(exp, max_ops=max_ops))
        except Exception as exc:  # noqa: BLE001 - reported: an artifact that cannot be read is rejected
            facts["error"] = f"{type(exc).__name__}: {exc}"[:2000]
    facts.update(
        in_avals=[[list(a.shape), _dtype_name(a.dtype)] for a in exp.in_avals],
        out_avals=[[list(a.shape), _dtype_name(a.dtype)] for a in exp.out_avals],
        in_tree=str(exp.in_tree),
        out_tree=str(exp.out_tree),
        platforms=list(exp.platforms),
    )
    return facts


def _isolation() -> dict[str, Any]:
    """The timer child's own account that no candidate Python exists here: no candidate module
    was imported, and no .py file but the trusted side's own is in its directories."""
    ours = {"hlo_cost.py", "cpu_twin.py"}
    py: list[str] = []
    for root in (OPTS["in"], OPTS["work"]):
        for d, _dirs, names in os.walk(root):
            py += [os.path.join(d, n) for n in names if n.endswith(".py") and n not in ours]
    return {"role": ROLE, "candidate_module": "candidate" in sys.modules, "py_files": py[:20]}


def _digest(out: Any) -> str:
    """A hash of a program's whole output (structure, dtypes, shapes, bytes): a timed output
    equal to the checked output of the same inputs is checked."""
    import hashlib  # deferred: only the timer's checks need it

    leaves, treedef = jax.tree_util.tree_flatten(out)
    h = hashlib.blake2b(str(treedef).encode(), digest_size=16)
    for leaf in leaves:
        arr = np.asarray(leaf)
        h.update(f"|{_dtype_name(arr.dtype)}{arr.shape}|".encode())
        h.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8).data)
    return h.hexdigest()


# the attribute that numbers a kernel's custom call in the judged program (the cpu twin replaces
# each numbered call by its kernel's interpreted program: ``jaxbench/profiling/cpu_twin.py``)
KERNEL_SITE_ATTR = "jaxbench.kernel_site"
# the lowering rule that replaces JAX's own: one (primitive, rule) pair, as JAX's
# LoweringParameters.override_lowering_rules types it
_Overrides = tuple[tuple[Any, Callable[..., Any]]]
# one kernel site: its operands' (shape, dtype) and its pallas_call's parameters
_Site = tuple[list[tuple[tuple[int, ...], Any]], dict[str, Any]]


def _export_traced(traced: Any, platform: str, checks: Sequence[Any] = (), overrides: _Overrides | None = None) -> Any:
    """``jax.export`` of a program already traced: ``jax.export.export`` would call the
    candidate's function again, and the one trace is the only call it gets (TRUST.md 1)."""
    from jax._src.export import _export as _jexport  # deferred: internal API of the pinned JAX
    from jax._src.interpreters import mlir as _jmlir

    lowered = traced.lower(
        lowering_platforms=(platform,),
        _private_parameters=_jmlir.LoweringParameters(
            override_lowering_rules=overrides, for_export=True, hoist_constants_as_args=False
        ),
    )
    return _jexport._export_lowered(lowered, traced.jaxpr, traced.fun_name, disabled_checks=list(checks))


class _KernelSites:
    """Lowers the traced program's ``pallas_call``s for a TPU as JAX does, numbering each one's
    custom call and keeping its operands' shapes and its parameters, so that the same kernel
    can be exported again through JAX's generic Pallas interpreter for the cpu twin. A
    ``pallas_call`` the candidate asked to interpret lowers to plain HLO: no site, and its work
    counts outside Pallas in the judged program and the twin alike."""

    def __init__(self) -> None:
        from jax._src.pallas import pallas_call as _pc  # deferred: internal API of the pinned JAX

        self._pc: types.ModuleType = _pc
        self.sites: list[_Site] = []

    def overrides(self) -> _Overrides:
        return ((self._pc.pallas_call_p, self._lower),)

    def _lower(self, ctx: Any, *args: Any, **params: Any) -> Any:
        from jax._src.lib.mlir import ir  # deferred: as above

        if params.get("interpret"):
            return self._pc._pallas_call_lowering(ctx, *args, **params)
        block = ir.InsertionPoint.current.block
        before = len(block.operations)
        outs = self._pc._pallas_call_lowering(ctx, *args, **params)
        calls = [op for op in list(block.operations)[before:] if op.operation.name == "stablehlo.custom_call"]
        if len(calls) != 1:
            raise ValueError(f"a pallas_call lowered to {len(calls)} custom calls, not one")
        calls[0].operation.attributes[KERNEL_SITE_ATTR] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), len(self.sites)
        )
        self.sites.append(([(tuple(a.shape), a.dtype) for a in ctx.avals_in], dict(params)))
        return outs

    def interpreted(self, i: int) -> Any:
        """Site ``i``'s kernel alone, exported for the cpu through the generic interpreter."""
        avals, params = self.sites[i]
        params = dict(params, interpret=True)
        prim = self._pc.pallas_call_p

        def kernel(*args: Any) -> Any:
            return prim.bind(*args, **params)

        specs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in avals]
        return jax.export.export(jax.jit(kernel), platforms=["cpu"])(*specs)


def _callbacks_in(jaxpr: Any) -> bool:
    """Whether a traced program calls back into its process (pure_callback, io_callback,
    jax.debug): such a program cannot leave it, and says so."""
    for eqn in jaxpr.eqns:
        if "callback" in eqn.primitive.name:
            return True
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and _callbacks_in(inner):
                    return True
    return False


def _write_artifact(out_dir: str, name: str, data: bytes | bytearray) -> dict[str, str | int]:
    """Write one artifact and say what was written: its size and digest, from the bytes in hand
    (the trusted side reads the file at once and checks both)."""
    import hashlib  # deferred: only the export child writes artifacts

    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)
    return {"file": name, "bytes": len(data), "blake2b": hashlib.blake2b(data, digest_size=32).hexdigest()}


class Job:
    def __init__(self, spec: Message) -> None:
        self.spec = spec
        self.manifest: Message = json.load(open(os.path.join(OPTS["in"], "manifest.json")))
        self.fn: Any = None
        self.compiled: Any = None  # the program that runs: compile()
        self.artifact: Any = None  # the candidate's exported program: load()
        self.hashes: dict[str, str] = {}  # check set -> _digest of its output
        self.stage = "import"
        self.timed: Any = None

    # -- compile: import, CONFIG, trace, lower, compile
    def load_function(self) -> Any:
        spec = self.spec
        if ROLE == "timer":
            # the XLA baseline, serialized by the trusted side with jax.export (no reference
            # source code is needed or visible in any child), or the candidate's artifact,
            # exported by the export child: a timer never runs a candidate's Python
            if spec["mode"] == "baseline":
                return _deserialize("baseline.jaxexport").call
            if self.artifact is None:
                raise RuntimeError("no candidate artifact loaded")
            return self.artifact.call
        path = os.path.join(OPTS["in"], CANDIDATE_FILE)
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        self.stage = "syntax"
        code = compile(source, path, "exec")
        self.stage = "import"
        mod: Any = types.ModuleType("candidate")  # the candidate's module: it sets any attribute
        mod.__file__ = path
        sys.modules["candidate"] = mod
        exec(code, mod.__dict__)
        fn = mod.__dict__.get("workload")
        if not callable(fn):
            raise LookupError("no_workload")
        cfg = mod.__dict__.get("CONFIG")
        if isinstance(cfg, dict):
            cfg.update(spec.get("config") or {})
        else:
            mod.CONFIG = dict(spec.get("config") or {})
        return fn

    def named(self, fn: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
        def program(*args: Any) -> Any:
            return fn(*args)

        program.__name__ = program.__qualname__ = name or self.spec["name"]
        return program

    def import_function(self) -> tuple[Any, Message | None]:
        """(the program's function, None), or (None, the error reply) where loading it failed."""
        self.stage = "import"
        try:
            return self.load_function(), None
        except LookupError as exc:
            if str(exc) == "no_workload":
                return None, {
                    "type": "error",
                    "stage": "no_workload",
                    "exc_type": "LookupError",
                    "message": "the module defines no callable `workload`",
                    "where": [],
                    "pallas": False,
                }
            return None, error_reply(self.stage, exc)
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a candidate included
            return None, error_reply(self.stage, exc)

    def compile(self) -> Message:
        """Compile the program (the timer's only kind: an exported one) for this device."""
        times = {}
        t = time.perf_counter()
        fn, failed = self.import_function()
        if failed:
            return failed
        times["import_s"] = time.perf_counter() - t
        specs = input_specs(self.manifest)
        try:
            t = time.perf_counter()
            lowered = jax.jit(self.named(fn)).lower(*specs)
            times["lower_s"] = time.perf_counter() - t
        except BaseException as exc:  # noqa: BLE001
            return error_reply("lower", exc)
        try:
            t = time.perf_counter()
            self.compiled = lowered.compile()
            times["compile_s"] = time.perf_counter() - t
            if _dev.platform != "cpu":
                _write_text("compiled.txt", self.compiled.as_text() or "")
        except BaseException as exc:  # noqa: BLE001
            return error_reply("compile", exc)
        return {"type": "compiled", "times": times}

    # -- load (timer): the candidate's artifact, deserialized and described before anything runs
    def load(self, cmd: Message) -> Message:
        """``artifact``: the judged program. ``kernels`` (the cpu target): its kernels'
        interpreted programs, from which the cpu twin is built here, in a process that never ran
        candidate code (``cpu_twin.py``). The reply describes the program that will run
        (``facts``) and the judged one (``share_facts``, the same where they are one). A judged
        program above ``max_ops`` operations gets no twin: its count is the reply's ``facts``."""
        t = time.perf_counter()
        stage = "artifact"
        max_ops = cmd.get("max_ops")
        share_facts = None
        try:
            judged = _deserialize(cmd["artifact"], cmd.get("max_bytes"))
            self.artifact = judged
            if cmd.get("kernels") is not None:
                share_facts = _facts(judged, max_ops)
                if (
                    isinstance(max_ops, int)
                    and isinstance(share_facts.get("ops"), int)
                    and share_facts["ops"] > max_ops
                ):
                    # refused on the count (verdict/artifact.py): nothing more is built or read
                    return {"type": "loaded", "facts": share_facts, "share_facts": None, "isolation": _isolation()}

                stage = "twin"
                kernels = [_deserialize(k, cmd.get("max_bytes")) for k in cmd["kernels"]]
                twin = _load_by_path("cpu_twin.py")
                if twin is None:
                    raise RuntimeError("no cpu_twin.py")
                self.artifact = twin.cpu_twin(judged, kernels)
        except BaseException as exc:  # noqa: BLE001 - an unreadable artifact is the candidate's
            return {
                "type": "error",
                "stage": stage,
                "category": getattr(exc, "category", None),
                "exc_type": type(exc).__name__,
                "message": f"{type(exc).__name__}: {exc}"[:4000],
                "where": [],
                "pallas": False,
            }
        reply: Message = {"type": "loaded", "facts": _facts(self.artifact, max_ops), "share_facts": share_facts}
        reply["isolation"] = _isolation()
        reply["load_s"] = time.perf_counter() - t
        return reply

    # -- export_run (export child): the candidate's program, traced once, serialized
    def export_run(self, target: Message) -> Message:
        """Trace ``workload`` exactly once and derive every program from that one trace: the
        judged program (the native lowering for ``export_platform``: TPU for a TPU or the cpu
        target, CUDA for a GPU) and, with ``kernels`` (the cpu target), each of its Pallas
        kernels alone through JAX's generic interpreter. Nothing calls the candidate's Python
        again; the cpu program itself is assembled later by the timer (``cpu_twin.py``)."""
        fn, failed = self.import_function()
        if failed:
            return failed
        specs = input_specs(self.manifest)
        out_dir = os.path.join(OPTS["work"], "artifacts")
        os.makedirs(out_dir, exist_ok=True)
        t = time.perf_counter()
        # the kernels (and libraries such as Tokamax that ask for the generation while tracing)
        # see the device they are lowered for: the TPU a cpu-target candidate is judged for
        with _target_device(target["trace_platform"], target.get("device_kind")):
            try:
                traced = jax.jit(self.named(fn)).trace(*specs)  # the one call of the candidate's code
            except BaseException as exc:  # noqa: BLE001
                return error_reply("trace", exc)
            sites = _KernelSites() if target.get("kernels") else None
            # kernel custom calls JAX does not promise to keep stable across versions (Triton,
            # Mosaic GPU): the artifact is read back by this same installation at once
            checks = [jax.export.DisabledSafetyCheck.custom_call(c) for c in target.get("unstable_calls") or ()]
            try:
                exp = _export_traced(traced, target["export_platform"], checks, sites.overrides() if sites else None)
            except BaseException as exc:  # noqa: BLE001
                reply = error_reply("lower", exc)
                if _callbacks_in(traced.jaxpr.jaxpr):
                    # a host callback does not lower for another platform than this process's
                    reply["message"] = "serialization of host_callbacks refused: " + reply["message"]
                return reply
            try:
                data = exp.serialize()  # refuses host callbacks: they cannot leave this process
            except BaseException as exc:  # noqa: BLE001
                return error_reply("serialize", exc)
            trace_s = time.perf_counter() - t
            kernels = []
            if sites is not None:
                if len(sites.sites) > target.get("max_kernels", 256):
                    return {
                        "type": "error",
                        "stage": "kernels",
                        "exc_type": "ValueError",
                        "message": f"{len(sites.sites)} kernel sites, over the cap {target.get('max_kernels', 256)}",
                        "where": [],
                        "pallas": True,
                    }
                for i in range(len(sites.sites)):
                    try:
                        kdata = sites.interpreted(i).serialize()
                    except BaseException as exc:  # noqa: BLE001 - lowers for a TPU, not interpretable
                        reply = error_reply("interpret", exc)
                        reply["kernel_site"] = i
                        return reply
                    kernels.append(_write_artifact(out_dir, f"kernel_{i}.jaxexport", kdata))
        program = _write_artifact(out_dir, "program.jaxexport", data)
        return {
            "type": "artifacts",
            "program": program,
            "kernels": kernels if sites is not None else None,
            "export_s": time.perf_counter() - t,
            "trace_lower_s": trace_s,
        }

    # -- correctness: every check set once, outputs written
    def check(self, set_ids: list[str]) -> Message:
        result: Message = {"type": "outputs", "sets": {}}
        t0 = time.perf_counter()
        exec_s = 0.0
        for sid in set_ids:
            args = load_set(self.manifest, sid)
            try:
                t = time.perf_counter()
                out = self.compiled(*args)
                jax.block_until_ready(out)
                exec_s += time.perf_counter() - t
            except BaseException as exc:  # noqa: BLE001
                return error_reply("execute", exc)
            result["sets"][sid] = write_outputs(sid, out)
            self.hashes[sid] = _digest(out)
            del out
        result["exec_s"] = exec_s
        result["phase_s"] = time.perf_counter() - t0
        return result

    # -- the baseline, beside the candidate: compiled from the trusted side's exported program
    # when the job arrives, before any candidate code exists in this process
    def load_baseline(self) -> str | None:
        name: str | None = self.spec.get("baseline_name")
        if not name:
            return None
        with open(os.path.join(OPTS["in"], "baseline.jaxexport"), "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
        specs = input_specs(self.manifest)
        t = time.perf_counter()
        self.baseline = jax.jit(self.named(exported.call, name)).lower(*specs).compile()
        self.baseline_compile_s = time.perf_counter() - t
        return name

    # -- timing: warm-up, then the timed loop inside a profiler trace. With a baseline, the two
    # programs alternate in blocks of ``block`` calls on the same inputs, the program that goes
    # first in each block given by ``order`` (drawn and recorded by the trusted side). Every
    # output of both programs is fetched and hashed after its call, outside the timed call (the
    # same treatment for both); a candidate output whose hash differs from that of its input
    # set's checked output is written for the trusted side to check. ``offset``: the number of
    # calls timed in earlier rounds of the same phase (adaptive sampling): call ``offset + i``
    # uses input set ``(offset + i) % m`` and names its written output by that global index.
    def timing(
        self,
        set_ids: list[str],
        warmup: int,
        iters: int,
        trace_dir: str,
        block: int = 1,
        order: Sequence[int] | None = None,
        offset: int = 0,
    ) -> Message:
        if offset:
            # the trusted side has read the earlier rounds' traces and written outputs: their
            # space in this work directory (a tmpfs of a fixed size) is this round's
            _forget_earlier_rounds(trace_dir)
        sets = [load_set(self.manifest, sid) for sid in set_ids]
        m = len(sets)
        progs = [self.compiled] + ([self.baseline] if getattr(self, "baseline", None) else [])
        block = max(1, int(block)) if len(progs) > 1 else iters
        n_blocks = -(-iters // block)
        order = list(order or [])
        if len(progs) > 1 and len(order) != n_blocks:
            return {"type": "error", "stage": "protocol", "message": f"order has {len(order)} blocks, need {n_blocks}"}
        t = time.perf_counter()
        base_warmup_s = 0.0
        try:
            for i in range(warmup):
                for k, prog in enumerate(progs):
                    t_call = time.perf_counter()
                    _digest(jax.block_until_ready(prog(*sets[(offset + i) % m])))
                    if k:
                        base_warmup_s += time.perf_counter() - t_call
        except BaseException as exc:  # noqa: BLE001
            return error_reply("execute", exc)
        warmup_s = time.perf_counter() - t
        differing = []
        written = {}
        walls: list[list[float]] = [[] for _ in progs]
        prof = _Profiler()
        prof.start(trace_dir)
        try:
            t_loop = time.perf_counter()
            for b, first in enumerate(range(0, iters, block)):
                seq = (0, 1) if (len(progs) == 1 or not order[b]) else (1, 0)
                for k in seq[: len(progs)]:
                    for j in range(first, min(first + block, iters)):
                        i = offset + j
                        t = time.perf_counter()
                        out = progs[k](*sets[i % m])
                        jax.block_until_ready(out)
                        walls[k].append(time.perf_counter() - t)
                        digest = _digest(out)
                        if k == 0 and digest != self.hashes.get(set_ids[i % m]):
                            differing.append(i)
                            written[str(i)] = write_outputs(f"t{i}", out)
                        del out
            loop_s = time.perf_counter() - t_loop
        except BaseException as exc:  # noqa: BLE001
            with contextlib.suppress(Exception):
                prof.stop()
            return error_reply("execute", exc)
        t = time.perf_counter()
        prof.stop()
        stop_s = time.perf_counter() - t
        return {
            "type": "timed",
            "wall_s": walls[0],
            "baseline_wall_s": walls[1:] and walls[1],
            "loop_s": loop_s,
            "stop_trace_s": stop_s,
            "warmup_s": warmup_s,
            "differing": differing,
            "saved": written,
            "baseline_s": base_warmup_s
            + sum(walls[1] if len(walls) > 1 else [])
            + getattr(self, "baseline_compile_s", 0.0),
        }


def _forget_earlier_rounds(trace_dir: str) -> None:
    """Remove the traces of the timing rounds before the one that writes ``trace_dir``, and the
    timed outputs written in them (``out/t<i>``)."""
    parent = os.path.dirname(trace_dir)
    for name in os.listdir(parent) if os.path.isdir(parent) else ():
        if os.path.join(parent, name) != trace_dir:
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    out = os.path.join(OPTS["work"], "out")
    for name in os.listdir(out) if os.path.isdir(out) else ():
        if name.startswith("t") and name[1:].isdigit():
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)


def _jaxlib_version() -> str:
    try:
        from jaxlib import version as _v  # deferred: an internal JAX API; if it moves, only this feature fails

        return _v.__version__
    except Exception:  # noqa: BLE001
        return "unknown"


# what each role may be asked: only the export role imports a candidate's module, only the timer
# role runs programs on the device
_ROLE_COMMANDS = {
    "export": ("export_run",),
    "timer": ("open", "load", "compile", "check", "timing"),
}
_ALL_ROLE_COMMANDS = {c for cmds in _ROLE_COMMANDS.values() for c in cmds}


def main() -> None:
    send(
        {
            "type": "hello",
            **(_device_info() if _dev is not None else {"lazy_device": True}),
            "device_open_s": _open_s,
            "jax_version": jax.__version__,
            "jaxlib_version": _jaxlib_version(),
            "python": sys.version.split()[0],
            "pallas_tpu": _pltpu is not None,
            "import_s": _import_s,
            "uid": os.getuid(),
            "pid": os.getpid(),
        }
    )
    # the trusted side sends "job" before any command that uses it (one that came first would
    # fail on None, as it always has)
    job = cast(Job, None)
    while True:
        cmd = recv()
        kind = cmd.get("cmd")
        if kind in _ALL_ROLE_COMMANDS and kind not in _ROLE_COMMANDS[ROLE]:
            send({"type": "error", "stage": "protocol", "message": f"{kind!r} is not a command of the {ROLE} role"})
        elif kind == "open":
            try:
                open_s = _open_device() if _dev is None else 0.0
            except BaseException as exc:  # noqa: BLE001 - a busy or broken device: infrastructure
                send({"type": "error", "stage": "device", "message": f"{type(exc).__name__}: {exc}"[:2000]})
                continue
            send({"type": "device", **_device_info(), "open_s": open_s})
        elif kind == "job":
            job = Job(cmd)
            try:
                _load_cost_model()
            except BaseException as exc:  # noqa: BLE001 - the trusted side's file: infrastructure
                send({"type": "error", "stage": "cost_model", "message": str(exc)[:2000]})
                continue
            try:
                job.load_baseline()
            except BaseException as exc:  # noqa: BLE001 - the trusted side's program: infrastructure
                send({"type": "error", "stage": "baseline", "message": str(exc)[:2000]})
                continue
            send({"type": "ack"})
        elif kind == "export_run":
            send(job.export_run(cmd["target"]))
        elif kind == "load":
            send(job.load(cmd))
        elif kind == "compile":
            send(job.compile())
        elif kind == "check":
            send(job.check(cmd["sets"]))
        elif kind == "timing":
            send(
                job.timing(
                    cmd["sets"],
                    cmd["warmup"],
                    cmd["iters"],
                    os.path.join(OPTS["work"], "trace", f"r{int(cmd.get('round') or 0)}"),
                    cmd.get("block") or 1,
                    cmd.get("order"),
                    int(cmd.get("offset") or 0),
                )
            )
        elif kind == "exit":
            _release_fake_device()
            break
        else:
            send({"type": "error", "stage": "protocol", "message": f"unknown command {kind!r}"})
    _status.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
