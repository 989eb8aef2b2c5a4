"""Unit tests of the trusted side's pieces (no child process): trace decoding and selection,
reading the child's files, the verdict rules."""

import os

import numpy as np
import pytest

from jaxbench import arrays, sandbox
from jaxbench.profiling import xplane
from jaxbench.verdict import rules as verdict

# --------------------------------------------------------------------------- a tiny encoder


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(num, payload):
    if isinstance(payload, int):
        return _varint(num << 3) + _varint(payload)
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _stat(mid, *, ref=None, i=None, s=None):
    body = _field(1, mid)
    if ref is not None:
        body += _field(7, ref)
    if i is not None:
        body += _field(4, i)
    if s is not None:
        body += _field(5, s.encode())
    return body


def _space(events_per_run, module="jit_prog", n_runs=3, other_module_events=2, start=10**18):
    """An XSpace like the CPU profiler's: thunk events with interned hlo_module + run_id."""
    stat_md = {1: "hlo_module", 2: "run_id", 3: module, 4: "jit_other"}
    ev_md = {1: "fusion", 2: "copy"}
    events = b""
    t = 0
    for run in range(n_runs):
        for k in range(events_per_run):
            ev = _field(1, 1) + _field(2, t * 1000) + _field(3, 5000 * 1000)
            ev += _field(4, _stat(1, ref=3)) + _field(4, _stat(2, i=100 + run))
            events += _field(4, ev)
            t += 6000
        for k in range(other_module_events):
            ev = (
                _field(1, 2)
                + _field(2, t * 1000)
                + _field(3, 1000)
                + _field(4, _stat(1, ref=4))
                + _field(4, _stat(2, i=900 + run))
            )
            events += _field(4, ev)
            t += 100
    line = _field(2, b"tf_XLACpu") + _field(3, 0) + events
    plane = _field(2, b"/host:CPU") + _field(3, line)
    for k, v in stat_md.items():
        plane += _field(5, _field(1, k) + _field(2, _field(1, k) + _field(2, v.encode())))
    for k, v in ev_md.items():
        plane += _field(4, _field(1, k) + _field(2, _field(1, k) + _field(2, v.encode())))
    env = _field(2, b"Task Environment")
    env_md = {10: "profile_start_time", 11: "profile_stop_time"}
    for k, v in env_md.items():
        env += _field(5, _field(1, k) + _field(2, _field(1, k) + _field(2, v.encode())))
    env += _field(6, _stat(10, i=start)) + _field(6, _stat(11, i=start + t + 10**6))
    return _field(1, plane) + _field(1, env)


def test_xplane_selects_own_program_runs():
    data = _space(events_per_run=4, n_runs=3)
    space = xplane.XSpace(data)
    ex = xplane.program_executions(space, "prog", "cpu")
    assert len(ex.durations_s) == 3
    # each run: 4 thunks of 5 us, 6 us apart -> span 3*6 + 5 = 23 us
    assert ex.durations_s == pytest.approx([23e-6] * 3)
    assert ex.method == "cpu_thunk_span"
    assert space.profile_window_ns() == (10**18, 10**18 + (3 * (4 * 6000 + 200)) + 10**6)
    # another name selects nothing
    assert xplane.program_executions(space, "progX", "cpu").durations_s == []


def test_xplane_caps_and_garbage():
    with pytest.raises(xplane.TraceError):
        xplane.XSpace(b"\x0a\xff\xff\xff\x0f")  # length past the end
    with pytest.raises(xplane.TraceError):
        xplane.XSpace(b"\x0f")  # wire type 7
    old = xplane.MAX_EVENTS
    xplane.MAX_EVENTS = 5
    try:
        with pytest.raises(xplane.TraceError, match="events"):
            xplane.XSpace(_space(events_per_run=4, n_runs=3))
    finally:
        xplane.MAX_EVENTS = old


def test_xplane_reads_a_real_cpu_trace(tmp_path):
    import jax
    import jax.numpy as jnp

    def prog_abc(x):
        return jnp.tanh(x) @ x

    f = jax.jit(prog_abc)
    x = jnp.ones((64, 64))
    f(x).block_until_ready()
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 1
    jax.profiler.start_trace(str(tmp_path), profiler_options=opts)
    for _ in range(7):
        f(x).block_until_ready()
    jax.profiler.stop_trace()
    files = [os.path.join(r, n) for r, _, ns in os.walk(tmp_path) for n in ns if n.endswith(".xplane.pb")]
    space = xplane.read_trace_file(files[0])
    ex = xplane.program_executions(space, "prog_abc", "cpu")
    assert len(ex.durations_s) == 7 and all(d > 0 for d in ex.durations_s)
    assert space.profile_window_ns() is not None


def test_safedir_refuses_symlinks_fifos_and_big_files(tmp_path):
    (tmp_path / "ok.bin").write_bytes(b"12345")
    os.symlink("/etc/hostname", tmp_path / "link")
    os.mkdir(tmp_path / "d")
    os.symlink(str(tmp_path / "d"), tmp_path / "dlink")
    os.mkfifo(tmp_path / "fifo")
    d = sandbox.SafeDir(str(tmp_path))
    assert d.read("ok.bin", 10) == b"12345"
    with pytest.raises(OSError):
        d.read("ok.bin", 4)
    with pytest.raises(OSError):
        d.read("link", 1000)
    with pytest.raises(OSError):
        d.read("dlink/x", 1000)
    with pytest.raises(OSError):
        d.read("fifo", 1000)
    with pytest.raises(OSError):
        d.read("../etc/hostname", 1000)


def test_npy_roundtrip_and_strict_checks(tmp_path):
    import ml_dtypes

    a = (np.arange(12, dtype=np.float32) / 7).astype(ml_dtypes.bfloat16).reshape(3, 4)
    arrays.write_npy(str(tmp_path / "a.npy"), a)
    data = (tmp_path / "a.npy").read_bytes()
    back = arrays.load_npy_bytes(data, "bfloat16", (3, 4))
    assert back.dtype == a.dtype and np.array_equal(back.view(np.uint16), a.view(np.uint16))
    with pytest.raises(arrays.OutputError) as e:
        arrays.load_npy_bytes(data, "float32", (3, 4))
    assert e.value.category in ("dtype_mismatch", "shape_mismatch")
    with pytest.raises(arrays.OutputError) as e:
        arrays.load_npy_bytes(data, "bfloat16", (4, 3))
    assert e.value.category == "shape_mismatch"
    # a pickled object array is never loaded
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(arrays.OutputError):
        arrays.load_npy_bytes((tmp_path / "o.npy").read_bytes(), "float32", (1,))


def test_claims_checks():
    exp = [("bfloat16", (2, 3))]
    ok = {
        "treedef": "PyTreeDef(*)",
        "leaves": [{"type": "jaxlib._jax.ArrayImpl", "is_jax_array": True, "dtype": "bfloat16", "shape": [2, 3]}],
    }
    assert verdict.check_claims(ok, "PyTreeDef(*)", exp) is None
    assert verdict.check_claims({**ok, "treedef": "PyTreeDef((*,))"}, "PyTreeDef(*)", exp)[0] == "structure_mismatch"
    bad = {"treedef": "PyTreeDef(*)", "leaves": [{**ok["leaves"][0], "is_jax_array": False, "type": "numpy.ndarray"}]}
    assert verdict.check_claims(bad, "PyTreeDef(*)", exp)[0] == "not_array"
    bad = {"treedef": "PyTreeDef(*)", "leaves": [{**ok["leaves"][0], "shape": [1, 3]}]}
    assert verdict.check_claims(bad, "PyTreeDef(*)", exp)[0] == "shape_mismatch"


def test_cheat_detection():
    rng = np.random.default_rng(0)
    ids = ["s0", "s1"]
    inputs = {s: [rng.normal(size=(4, 8)).astype(np.float32)] for s in ids}
    refs = {s: [inputs[s][0] * 2] for s in ids}
    assert verdict.detect_cheat(ids, inputs, refs, {s: [inputs[s][0]] for s in ids}, 1e-2, 1e-2)[0] == "returns_input"
    assert (
        verdict.detect_cheat(ids, inputs, refs, {s: [np.zeros((4, 8), np.float32)] for s in ids}, 1e-2, 1e-2)[0]
        == "constant_output"
    )
    swapped = {"s0": refs["s1"], "s1": refs["s0"]}
    assert verdict.detect_cheat(ids, inputs, refs, swapped, 1e-2, 1e-2)[0] == "memorized_output"
    same = {s: [refs["s0"][0] + 5] for s in ids}
    assert verdict.detect_cheat(ids, inputs, refs, same, 1e-2, 1e-2)[0] == "constant_output"
    honest_bug = {s: [refs[s][0] + 1] for s in ids}
    assert verdict.detect_cheat(ids, inputs, refs, honest_bug, 1e-2, 1e-2) is None


def test_nan_never_passes():
    r = [np.ones((3, 3), np.float32)]
    c = [np.ones((3, 3), np.float32)]
    c[0][1, 1] = np.nan
    ok, cat, *_ = verdict.compare_set(r, r, c, 1e-2, 1e-2)
    assert not ok and cat == "non_finite"


def test_plausibility_gates():
    d = [1e-3] * 50
    assert verdict.plausibility(d, None, 1.0, None, None) is None
    assert "more than" in verdict.plausibility(d, None, 0.01, None, None)
    assert "floor" in verdict.plausibility(d, None, 1.0, None, 1e-2)
    assert "recorded" in verdict.plausibility(d, [0] * 50, 1.0, (100, 200), None, profile_ns=(50, 150))
    assert "say when" in verdict.plausibility(d, [0] * 50, 1.0, (100, 200), None, profile_ns=None)
    assert verdict.plausibility(d, [0] * 50, 1.0, (100, 10**12), None, profile_ns=(150, 10**11)) is None
    assert verdict.physical_floor(10**9, 0, 1e12, 1e12, "tpu") == pytest.approx(0.5e-3)


def test_error_messages_keep_the_useful_lines():
    msg = (
        "ValueError: Block shape for args[0] must have the same number of dimensions\n"
        "--------------------\n"
        "For simplicity, JAX has removed its internal frames from the traceback of the "
        "following exception. Set JAX_TRACEBACK_FILTERING=off to include these.\n"
    )
    out, cat, text = verdict.classify_child_error(
        {
            "stage": "trace",
            "exc_type": "ValueError",
            "message": msg,
            "pallas": True,
            "where": ["candidate.py:12 in workload: return pl.pallas_call("],
        },
        "compile",
    )
    assert (out, cat) == ("compile_error", "pallas_error")
    assert "JAX has removed" not in text and "candidate.py:12" in text
    out, cat, _ = verdict.classify_child_error(
        {
            "stage": "import",
            "exc_type": "ModuleNotFoundError",
            "missing_module": "evaluator",
            "message": "No module named 'evaluator'",
        },
        "compile",
    )
    assert (out, cat) == ("rejected", "reads_reference")


# --------------------------------------------------------------------------- limits, not races


class _StuckChild:
    """A child whose phase ran out of time, at or below its memory limit."""

    def __init__(self, at_limit):
        self._at_limit, self.killed = at_limit, False

    def dump_stacks(self):
        return '  File "candidate.py", line 9 in <module>'

    def at_memory_limit(self):
        assert not self.killed, "read after the kill emptied the cgroup"
        return self._at_limit

    def kill(self):
        self.killed = True


@pytest.mark.parametrize(
    "at_limit, expected", [(True, ("runtime_error", "oom")), (False, ("compile_error", "compile_timeout"))]
)
def test_a_child_timed_out_at_its_memory_limit_is_out_of_memory(at_limit, expected):
    """A memory hog thrashes at its cgroup limit before the kernel kills it; how long that takes
    depends on the machine's load. Whether its phase's time ran out first must not change the
    verdict: at the memory limit it is oom either way, and only a child below it times out."""
    from jaxbench.harness import outcomes
    from jaxbench.record import new_record

    rec = new_record(workload="12p", phase="compile")
    child = _StuckChild(at_limit)
    with pytest.raises(outcomes.Stop):
        outcomes.timed_out(rec, child, "compile", 40.0)
    assert child.killed and (rec["outcome"], rec["error_category"]) == expected
    assert "exceeded 40 s" in rec["message"] and "candidate.py" in rec["message"]


def test_a_forced_bubblewrap_mode_without_bubblewrap_is_refused_clearly(monkeypatch):
    from jaxbench.sandbox import probe

    monkeypatch.setenv("JAXBENCH_SANDBOX_MODE", "bwrap")
    monkeypatch.setattr(probe, "bwrap_info", lambda: None)
    with pytest.raises(sandbox.SandboxError, match="needs bubblewrap, which is not installed"):
        probe.best_mode("cpu")


# --------------------------------------------------------------------------- GPU device planes


def _gpu_space(runs=4, kernels=("fusion_1", "triton_rmsnorm", "fusion_2"), gap=2000, run_ids=False, shuffle=None):
    """An XSpace like a CUDA child's: ``/device:GPU:0`` with CUPTI kernel events on a stream
    line (interned ``hlo_module``, a ``correlation_id`` per launch), executions of the candidate
    ``jit_prog`` interleaved with the baseline's ``jit_base``, a copy on another stream, and a
    host plane whose launch events (same module, much longer) must not be taken for device time."""
    stat_md = {1: "hlo_module", 2: "correlation_id", 3: "jit_prog", 4: "jit_base", 5: "run_id"}
    names = {i + 1: n for i, n in enumerate((*kernels, "base_fusion", "MemcpyH2D"))}
    ids = {n: i for i, n in names.items()}
    events, copies = b"", b""
    t, corr = 0, 1000
    expected = []
    for run in range(runs):
        seq = list(kernels) if shuffle is None or run != shuffle else list(reversed(kernels))
        start = t
        for k, kname in enumerate(seq):
            dur = 3000 + 1000 * k
            ev = _field(1, ids[kname]) + _field(2, t * 1000) + _field(3, dur * 1000)
            ev += _field(4, _stat(1, ref=3)) + _field(4, _stat(2, i=corr))
            if run_ids:
                ev += _field(4, _stat(5, i=77 + run))
            events += _field(4, ev)
            corr += 1
            t += dur + 500  # launch gap inside one execution: device time all the same
        expected.append((t - 500 - start) * 1e-9)
        # the baseline's execution between two of the candidate's (ABBA interleaving)
        ev = _field(1, ids["base_fusion"]) + _field(2, t * 1000) + _field(3, 9000 * 1000)
        events += _field(4, ev + _field(4, _stat(1, ref=4)) + _field(4, _stat(2, i=corr)))
        corr += 1
        t += 9000 + gap
    # a host-to-device copy with no module (inputs staged before the loop)
    copies += _field(4, _field(1, ids["MemcpyH2D"]) + _field(2, 0) + _field(3, 10**6))
    plane = _field(2, b"/device:GPU:0")
    plane += _field(3, _field(1, 13) + _field(2, b"Stream #13(Kernel)") + _field(3, 0) + events)
    plane += _field(3, _field(1, 14) + _field(2, b"Stream #14(MemcpyH2D)") + _field(3, 0) + copies)
    for k, v in stat_md.items():
        plane += _field(5, _field(1, k) + _field(2, _field(1, k) + _field(2, v.encode())))
    for k, v in names.items():
        plane += _field(4, _field(1, k) + _field(2, _field(1, k) + _field(2, v.encode())))
    # host side: one long launch event per execution, with the module and a run_id
    host_ev = b""
    for run in range(runs):
        ev = _field(1, 1) + _field(2, run * 10**8) + _field(3, 5 * 10**7)
        host_ev += _field(4, ev + _field(4, _stat(1, ref=3)) + _field(4, _stat(2, i=500 + run)))
    host = _field(2, b"/host:CPU") + _field(3, _field(2, b"python") + _field(3, 0) + host_ev)
    for k, v in {1: "hlo_module", 2: "run_id", 3: "jit_prog"}.items():
        host += _field(5, _field(1, k) + _field(2, _field(1, k) + _field(2, v.encode())))
    host += _field(4, _field(1, 1) + _field(2, _field(1, 1) + _field(2, b"ExecuteOnStream")))
    return _field(1, host) + _field(1, plane) + _field(1, _field(2, b"/device:GPU:1")), expected


def test_gpu_device_time_comes_from_the_kernels_on_the_gpu_plane():
    data, expected = _gpu_space(runs=4)
    space = xplane.XSpace(data)
    ex = xplane.program_executions(space, "prog", "gpu", expected=4)
    assert ex.method == "gpu_kernel_sequence" and ex.plane == "/device:GPU:0"
    # each execution: three kernels of 3, 4, 5 us with 0.5 us gaps, 13 us; never the host's 50 us
    assert ex.durations_s == pytest.approx(expected) and ex.durations_s == pytest.approx([13e-6] * 4)
    assert ex.starts_ps == sorted(ex.starts_ps)
    # the interleaved baseline is its own program, one kernel per execution
    base = xplane.program_executions(space, "base", "gpu", expected=4)
    assert base.durations_s == pytest.approx([9e-6] * 4)
    # the CPU reader of the same trace would have timed the host's launch events instead
    assert xplane.program_executions(space, "prog", "cpu").durations_s == pytest.approx([50e-6] * 4)


def test_gpu_kernel_groups_must_match_the_executions_the_child_ran():
    space = xplane.XSpace(_gpu_space(runs=4)[0])
    with pytest.raises(xplane.TraceError, match="do not split into 5"):
        xplane.program_executions(space, "prog", "gpu", expected=5)  # 12 kernels, 3 per run
    with pytest.raises(xplane.TraceError, match="do not split"):
        xplane.program_executions(space, "prog", "gpu")  # no count: no guess
    # 12 kernels do split into 6 groups of 2, but not into one repeated sequence
    with pytest.raises(xplane.TraceError, match="one sequence"):
        xplane.program_executions(space, "prog", "gpu", expected=6)
    odd = xplane.XSpace(_gpu_space(runs=4, shuffle=2)[0])
    with pytest.raises(xplane.TraceError, match="one sequence"):
        xplane.program_executions(odd, "prog", "gpu", expected=4)


def test_gpu_kernels_with_a_run_id_are_grouped_by_it():
    data, expected = _gpu_space(runs=3, run_ids=True)
    ex = xplane.program_executions(xplane.XSpace(data), "prog", "gpu")
    assert ex.method == "device_kernel_span" and ex.durations_s == pytest.approx(expected)


def test_gpu_trace_without_a_gpu_plane_is_refused():
    tpu_only = _field(1, _field(2, b"/device:TPU:0"))
    with pytest.raises(xplane.TraceError, match="no device plane for platform gpu"):
        xplane.program_executions(xplane.XSpace(tpu_only), "prog", "gpu", expected=1)
