"""The sandboxed child: runs ONE candidate (or the XLA baseline) and writes only data.

This file is bound read-only into the sandbox on its own (not the repository, not the workload
registry, not the reference code; under bubblewrap it is ``/harness/sandbox_child.py``) and
imports only the standard library, numpy and jax, never a sibling module of its package. It is
started as ``python -I -S -B child_main.py --in DIR --work DIR [--site DIR]...``.

Protocol (everything here is data; the trusted side decides every verdict):

* fd 3 (replies): one JSON object per line. The first line is ``hello`` (platform, device kind,
  versions), sent after JAX is imported and warmed up and BEFORE any candidate code exists in
  this process, so it is trustworthy. Every later reply may be forged by the candidate and is
  treated as a claim that the trusted side checks.
* The device: opened (backend initialised, a warm-up jit) at start, and described in hello;
  with ``--lazy-device`` (exclusive devices: one process per TPU chip or GPU) only on the
  ``open`` command, which the trusted side sends once it holds the device's lock
  (``jaxbench/sandbox/device.py``), still before any candidate code; the reply ``device``
  carries what hello would have. With ``--fake-device DIR`` (the simulated exclusive device
  of the tests) opening the device first takes ``DIR/node`` with a non-blocking exclusive
  flock and fails loudly when another process holds it, as libtpu does.
* fd 0 (commands): one JSON object per line, in order: ``open`` (lazy device only), ``job``
  (what to run: program name chosen by the harness, CONFIG, sets, iteration counts), then
  ``compile``, ``check``, ``timing`` and finally ``exit``. The trusted side sends a phase only when the previous one
  passed, and times every phase with its own clock.
* Inputs: ``<in>/manifest.json`` (dtypes, shapes, file names) and ``<in>/sets/<set>/<k>.npy``;
  bfloat16 arrays are stored as their raw uint16 bits. Loaded with ``allow_pickle=False``.
* ``<in>/jaxpr_cost.py``: the trusted side's FLOP walk (``jaxbench/profiling/jaxpr_cost.py``),
  loaded when the job arrives; the compile (and export) reply carries its ``cost`` of the
  traced program: the FLOPs outside every pallas_call (a claim, like the primitive counts).
* Outputs: ``<work>/out/<tag>/<k>.npy`` (bfloat16 again as uint16), the profiler trace under
  ``<work>/trace``, compile artefacts under ``<work>/compile``.
"""

import contextlib
import json
import os
import shutil
import sys
import time
import traceback
import types

STATUS_FD = 3
MAX_COMMAND = 1 << 20
MAX_TEXT = 4 << 20  # jaxpr / lowered text written for the trusted side's scan
CANDIDATE_FILE = "candidate.py"


def _parse_args(argv):
    opts = {"site": [], "in": None, "work": None, "probe": False, "lazy_device": False, "fake_device": None}
    it = iter(argv)
    for a in it:
        if a in ("--in", "--work"):
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
# Libraries that parse flags from sys.argv on first use (absl, hence tokamax) must not see ours.
sys.argv = [sys.argv[0]]
for _p in reversed(OPTS["site"]):
    sys.path.insert(0, _p)

_status = os.fdopen(STATUS_FD, "w", buffering=1, closefd=False)

import faulthandler  # noqa: E402
import signal as _signal  # noqa: E402

faulthandler.register(_signal.SIGUSR1, all_threads=True)  # stacks to stderr on request


def send(obj):
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


def recv():
    line = sys.stdin.buffer.readline(MAX_COMMAND)
    if not line:
        raise SystemExit(0)
    return json.loads(line)


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
_dev = None  # the device, once opened (_open_device)


def _profiler_options():
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0  # the Python tracer multiplies the trace size by ~15
    opts.host_tracer_level = 1  # level 1 keeps the XLA runtime's thunk events
    return opts


class _Profiler:
    """A profiler session whose serialised XSpace is written by this module itself (no
    TensorBoard export, no trace.json conversion: several times faster than stop_trace)."""

    def __init__(self):
        self.session = None
        self.log_dir = None
        try:
            from jax._src.lib import (
                _profiler as _p,  # deferred: an internal JAX API; if it moves, only this feature fails
            )

            self._cls = _p.ProfilerSession
        except Exception:  # noqa: BLE001 - fall back to the public API
            self._cls = None

    def start(self, log_dir):
        self.log_dir = log_dir
        if self._cls is not None:
            self.session = self._cls(_profiler_options())
        else:
            jax.profiler.start_trace(log_dir, profiler_options=_profiler_options())

    def stop(self):
        if self._cls is None:
            jax.profiler.stop_trace()
            return
        data = self.session.stop()
        self.session = None
        d = os.path.join(self.log_dir, "plugins", "profile", "run")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "child.xplane.pb"), "wb") as f:
            f.write(data)


def _warm_profiler():
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
_fake_fd = None


def _fake_log(event):
    """One line per open/release of the simulated device: written after taking it and before
    releasing it, so logged intervals lie inside the real holds."""
    line = f"{event} {time.time_ns()} {os.getpid()} {_CHILD_ID}\n".encode()
    fd = os.open(os.path.join(OPTS["fake_device"], "log"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _take_fake_device():
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


def _release_fake_device():
    global _fake_fd
    if _fake_fd is not None:
        _fake_log("close")
        os.close(_fake_fd)
        _fake_fd = None


def _open_device():
    """Initialise the backend on the device and warm it up (a jit, the profiler); returns the
    seconds it took."""
    global _dev
    t = time.perf_counter()
    if OPTS["fake_device"]:
        _take_fake_device()
    _dev = jax.devices()[0]
    jax.jit(lambda a: a * 2 + 1)(jnp.arange(8, dtype=jnp.float32)).block_until_ready()
    _warm_profiler()
    return time.perf_counter() - t


def _device_info():
    return {
        "platform": _dev.platform,
        "device_kind": getattr(_dev, "device_kind", ""),
        "n_devices": len(jax.devices()),
    }


_open_s = None if OPTS["lazy_device"] else _open_device()

# --------------------------------------------------------------------------- helpers


def _dtype(name):
    return _BF16 if name == "bfloat16" else np.dtype(name)


def load_set(manifest, set_id):
    arrays = []
    base = os.path.join(OPTS["in"], "sets", set_id)
    for k, spec in enumerate(manifest["inputs"]):
        raw = np.load(os.path.join(base, f"{k}.npy"), allow_pickle=False)
        if spec["dtype"] == "bfloat16":
            raw = raw.view(_BF16)
        arrays.append(jax.device_put(raw, _dev))
    return arrays


def input_specs(manifest):
    return [jax.ShapeDtypeStruct(tuple(s["shape"]), _dtype(s["dtype"])) for s in manifest["inputs"]]


def write_outputs(tag, out):
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


def _candidate_frames(tb):
    lines = []
    for fs in traceback.extract_tb(tb):
        if os.path.basename(fs.filename) == CANDIDATE_FILE:
            lines.append(f"candidate.py:{fs.lineno} in {fs.name}: {(fs.line or '').strip()}")
    return lines[-3:]


def _pallas_related(exc):
    text = f"{type(exc).__name__}: {exc}"
    if any(w in text for w in ("Pallas", "pallas", "Mosaic", "mosaic", "BlockSpec", "block shape")):
        return True
    for fs in traceback.extract_tb(exc.__traceback__):
        if "/pallas/" in fs.filename or "/mosaic/" in fs.filename:
            return True
    return False


def error_reply(stage, exc):
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


def _write_text(name, text):
    d = os.path.join(OPTS["work"], "compile")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        f.write(text[:MAX_TEXT])


_COST_MODEL = None


def _load_cost_model():
    """``jaxpr_cost.py``, written into the input directory by the trusted side: loaded when the
    job arrives, before any candidate code exists in this process."""
    global _COST_MODEL
    path = os.path.join(OPTS["in"], "jaxpr_cost.py")
    if _COST_MODEL is None and os.path.exists(path):
        mod = types.ModuleType("jaxbench_jaxpr_cost")
        mod.__file__ = path
        with open(path, encoding="utf-8") as f:
            exec(compile(f.read(), path, "exec"), mod.__dict__)
        _COST_MODEL = mod


def _cost(jaxpr):
    """The FLOPs outside/inside the pallas_calls (a claim; the trusted side decides)."""
    if _COST_MODEL is None:
        return {"error": "no cost model"}
    try:
        return _COST_MODEL.program_cost(jaxpr)
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}


def _walk(jaxpr, counts, depth=0):
    from jax.extend import core as jcore  # deferred: an internal JAX API; if it moves, only this feature fails

    if depth > 64:
        return
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        counts[name] = counts.get(name, 0) + 1
        for v in eqn.params.values():
            _walk_param(v, counts, depth, jcore)


def _walk_param(v, counts, depth, jcore):
    if isinstance(v, jcore.ClosedJaxpr):
        _walk(v.jaxpr, counts, depth + 1)
    elif isinstance(v, jcore.Jaxpr):
        _walk(v, counts, depth + 1)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _walk_param(x, counts, depth, jcore)


# --------------------------------------------------------------------------- the job


def _target_device(platform, device_kind):
    """Lower as if for one chip of the target (an abstract device: nothing runs on it), so that
    kernels which ask for the TPU generation (Mosaic integer division, Tokamax pipelines) lower
    on a CPU host too."""
    if platform != "tpu":
        return contextlib.nullcontext()
    from jax.sharding import (  # deferred: an internal JAX API; if it moves, only this feature fails
        AbstractDevice,
        AbstractMesh,
    )

    mesh = AbstractMesh(
        (1,),
        ("_target",),
        abstract_device=AbstractDevice(device_kind=device_kind or "TPU v6 lite", num_cores=1, platform="tpu"),
    )
    return jax.sharding.use_abstract_mesh(mesh)


class Job:
    def __init__(self, spec):
        self.spec = spec
        self.manifest = json.load(open(os.path.join(OPTS["in"], "manifest.json")))
        self.fn = None
        self.compiled = None
        self.interpret = bool(spec.get("interpret"))
        self.stage = "import"
        self.timed = None

    def ctx(self):
        """Interpret mode emulates one TPU chip: the target device is in context too, as when
        lowering, so kernels that ask for the TPU generation while tracing (Tokamax's GMM
        pipeline) run on a CPU host as they would on the target."""
        if self.interpret and _pltpu is not None:
            stack = contextlib.ExitStack()
            stack.enter_context(_pltpu.force_tpu_interpret_mode())
            stack.enter_context(_target_device("tpu", self.spec.get("device_kind")))
            return stack
        return contextlib.nullcontext()

    # -- compile: import, CONFIG, trace, lower, compile
    def load_function(self):
        spec = self.spec
        if spec["mode"] == "baseline":
            # the XLA baseline, serialized by the trusted side with jax.export: no reference
            # source code is needed (or visible) in any child
            with open(os.path.join(OPTS["in"], "baseline.jaxexport"), "rb") as f:
                exported = jax.export.deserialize(bytearray(f.read()))
            return exported.call
        path = os.path.join(OPTS["in"], CANDIDATE_FILE)
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        self.stage = "syntax"
        code = compile(source, path, "exec")
        self.stage = "import"
        mod = types.ModuleType("candidate")
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

    def named(self, fn, name=None):
        def program(*args):
            return fn(*args)

        program.__name__ = program.__qualname__ = name or self.spec["name"]
        return program

    def import_function(self):
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

    def compile(self):
        times = {}
        t = time.perf_counter()
        fn, failed = self.import_function()
        if failed:
            return failed
        times["import_s"] = time.perf_counter() - t
        jitted = jax.jit(self.named(fn))
        specs = input_specs(self.manifest)
        reply = {"type": "compiled"}
        with self.ctx():
            try:
                t = time.perf_counter()
                traced = jitted.trace(*specs)
                times["trace_s"] = time.perf_counter() - t
                counts = {}
                _walk(traced.jaxpr.jaxpr, counts)
                reply["primitives"] = counts
                reply["cost"] = _cost(traced.jaxpr)
                _write_text("jaxpr.txt", str(traced.jaxpr))
            except BaseException as exc:  # noqa: BLE001
                return error_reply("trace", exc)
            try:
                t = time.perf_counter()
                lowered = traced.lower()
                times["lower_s"] = time.perf_counter() - t
                text = lowered.as_text()
                _write_text("lowered.txt", text)
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
        reply["times"] = times
        return reply

    # -- export: lower for another platform at the given shapes, without running
    def export(self):
        fn, failed = self.import_function()
        if failed:
            return failed
        specs = input_specs(self.manifest)
        t = time.perf_counter()
        target = _target_device(self.spec["platform"], self.spec.get("device_kind"))
        target.__enter__()  # left entered: this child serves this one job, then exits
        try:
            traced = jax.jit(self.named(fn)).trace(*specs)
            counts = {}
            _walk(traced.jaxpr.jaxpr, counts)
            cost = _cost(traced.jaxpr)
        except BaseException as exc:  # noqa: BLE001
            return error_reply("trace", exc)
        try:
            exp = jax.export.export(jax.jit(self.named(fn)), platforms=[self.spec["platform"]])(*specs)
            text = exp.mlir_module()
            _write_text("exported.txt", text)
        except BaseException as exc:  # noqa: BLE001
            return error_reply("lower", exc)
        return {"type": "exported", "primitives": counts, "cost": cost, "export_s": time.perf_counter() - t}

    # -- correctness: every check set once, outputs written
    def check(self, set_ids):
        result = {"type": "outputs", "sets": {}}
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
            del out
        result["exec_s"] = exec_s
        result["phase_s"] = time.perf_counter() - t0
        return result

    # -- the baseline, beside the candidate: compiled from the trusted side's exported program
    # when the job arrives, before any candidate code exists in this process
    def load_baseline(self):
        name = self.spec.get("baseline_name")
        if not name:
            return None
        with open(os.path.join(OPTS["in"], "baseline.jaxexport"), "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
        specs = input_specs(self.manifest)
        t = time.perf_counter()
        self.baseline = jax.jit(self.named(exported.call, name)).lower(*specs).compile()
        self.baseline_compile_s = time.perf_counter() - t
        return name

    # -- timing: warm-up, then the timed loop inside a profiler trace; with a baseline, the two
    # programs alternate in blocks of ``block`` calls on the same inputs (ABBA block order:
    # neither always goes first; in a block only the first call follows the other program)
    def timing(self, set_ids, warmup, iters, save_iters, trace_dir, block=1):
        sets = [load_set(self.manifest, sid) for sid in set_ids]
        m = len(sets)
        progs = [self.compiled] + ([self.baseline] if getattr(self, "baseline", None) else [])
        block = max(1, int(block)) if len(progs) > 1 else iters
        t = time.perf_counter()
        base_warmup_s = 0.0
        try:
            for i in range(warmup):
                for k, prog in enumerate(progs):
                    t_call = time.perf_counter()
                    jax.block_until_ready(prog(*sets[i % m]))
                    if k:
                        base_warmup_s += time.perf_counter() - t_call
        except BaseException as exc:  # noqa: BLE001
            return error_reply("execute", exc)
        warmup_s = time.perf_counter() - t
        save = set(save_iters)
        kept = {}
        walls = [[] for _ in progs]
        prof = _Profiler()
        prof.start(trace_dir)
        try:
            t_loop = time.perf_counter()
            for b, first in enumerate(range(0, iters, block)):
                order = range(len(progs)) if b % 4 in (0, 3) else reversed(range(len(progs)))
                for k in order:
                    for i in range(first, min(first + block, iters)):
                        t = time.perf_counter()
                        out = progs[k](*sets[i % m])
                        jax.block_until_ready(out)
                        walls[k].append(time.perf_counter() - t)
                        if k == 0 and i in save:
                            kept[i] = out
            loop_s = time.perf_counter() - t_loop
        except BaseException as exc:  # noqa: BLE001
            with contextlib.suppress(Exception):
                prof.stop()
            return error_reply("execute", exc)
        t = time.perf_counter()
        prof.stop()
        stop_s = time.perf_counter() - t
        saved = {str(i): write_outputs(f"t{i}", o) for i, o in kept.items()}
        return {
            "type": "timed",
            "wall_s": walls[0],
            "baseline_wall_s": walls[1:] and walls[1],
            "loop_s": loop_s,
            "stop_trace_s": stop_s,
            "warmup_s": warmup_s,
            "saved": saved,
            "baseline_s": base_warmup_s
            + sum(walls[1] if len(walls) > 1 else [])
            + getattr(self, "baseline_compile_s", 0.0),
        }


def _jaxlib_version():
    try:
        from jaxlib import version as _v  # deferred: an internal JAX API; if it moves, only this feature fails

        return _v.__version__
    except Exception:  # noqa: BLE001
        return "unknown"


def main():
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
    job = None
    while True:
        cmd = recv()
        kind = cmd.get("cmd")
        if kind == "open":
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
        elif kind == "compile":
            send(job.compile())
        elif kind == "export":
            send(job.export())
        elif kind == "check":
            send(job.check(cmd["sets"]))
        elif kind == "timing":
            send(
                job.timing(
                    cmd["sets"],
                    cmd["warmup"],
                    cmd["iters"],
                    cmd["save_iters"],
                    os.path.join(OPTS["work"], "trace"),
                    cmd.get("block") or 1,
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
