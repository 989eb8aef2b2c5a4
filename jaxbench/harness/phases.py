"""One evaluation through one child, phase by phase (trusted side): the job, compile, check
and timing phases, each asked of the child through :meth:`_Run.phase` (one place for the
timeout, crash, error-reply and protocol handling), the child's files read back, the trace
parsed, and every failure written into the record as its outcome."""

from __future__ import annotations

import os
import random
import secrets
import time

import numpy as np

from .. import arrays, environment
from .. import hardware as hw
from ..profiling import xplane
from ..record import Outcome, trim
from ..sandbox.child import SandboxedChild
from ..sandbox.options import ChildGone, PhaseTimeout, SandboxError, SandboxOptions
from ..verdict import artifact as artifact_rules
from ..verdict import pallas_share
from ..verdict import rules as verdict
from .prepare import (
    _Prepared,
    _target_for,
    _write_artifact_model,
    _write_input,
    _write_twin_builder,
    exported_baseline,
    reference_hlo_cost,
)
from .settings import (
    BLOCK,
    COMPILE_WALL_SLACK,
    EXTERNAL_SIGNALS,
    ITERS,
    MAX_ARTIFACT_BYTES,
    TRACE_CAP,
    WARMUP,
    ChildKilled,
    InfrastructureError,
)


class _Run:
    """One candidate (or baseline) through one child, phase by phase."""

    def __init__(self, child: SandboxedChild, timeouts: dict, rec: dict):
        self.child, self.timeouts, self.rec = child, timeouts, rec
        self.phases = rec["phases"]

    def ask(self, phase: str, cmd: dict, timeout_key: str | None = None) -> dict:
        key = timeout_key or phase
        t = time.monotonic()
        self.child.send(cmd)
        try:
            if key in CPU_LIMITED:
                return self._recv_within_cpu(phase, self.timeouts[key])
            return self.child.recv(self.timeouts[key])
        finally:
            self.phases[f"{phase}_s"] = round(time.monotonic() - t, 6)

    def _recv_within_cpu(self, phase: str, budget: float) -> dict:
        """The reply of a compile-side phase, whose limit is CPU time: the child's own work,
        which the machine's load barely moves. Past ``budget`` CPU seconds the candidate's
        program has had its compile (PhaseTimeout: a verdict); a child that did not get that
        much CPU within COMPILE_WALL_SLACK times the budget of wall time was starved by the
        machine (MachineBusy: infrastructure, retried). Without per-child accounting (no
        cgroup) the budget is wall time, as for every other phase."""
        start = self.child.cpu_seconds()
        if start is None:
            return self.child.recv(budget)
        end = time.monotonic() + budget * COMPILE_WALL_SLACK
        while True:
            try:
                return self.child.recv(max(0.0, min(0.5, end - time.monotonic())))
            except PhaseTimeout:
                used = (self.child.cpu_seconds() or start) - start
                self.phases[f"{phase}_cpu_s"] = round(used, 3)
                if used > budget:
                    raise
                if time.monotonic() >= end:
                    raise MachineBusy(
                        f"the child got {used:.1f} s of CPU in {budget * COMPILE_WALL_SLACK:g} s of {phase}: "
                        "the machine is too busy to tell a slow compile from a starved one"
                    ) from None

    def phase(
        self, phase: str, cmd: dict, expect: str, *, strict: bool = False, timeout_key: str | None = None
    ) -> dict:
        """Ask the child for ``phase`` and return its reply of type ``expect``. Anything else
        ends the evaluation with its outcome in the record (raises _Stop): a timeout (the
        child's stacks, then it is killed), the child's death, an error reply (classified) or
        another reply (a protocol breach). With ``strict`` (the baseline's own timing) each of
        them is the harness's failure instead (raises InfrastructureError). ``replied_ns``:
        the wall clock when the reply arrived."""
        rec, child, limit = self.rec, self.child, self.timeouts[timeout_key or phase]
        try:
            reply = self.ask(phase, cmd, timeout_key)
        except PhaseTimeout:
            if strict:
                raise InfrastructureError(f"the baseline's {phase} exceeded {limit:g} s") from None
            _timeout(rec, child, phase, limit, cpu=f"{phase}_cpu_s" in self.phases)
        except MachineBusy as exc:
            child.kill()
            raise InfrastructureError(str(exc)) from None
        except ChildGone:
            if strict:
                raise InfrastructureError(f"the baseline child died while {phase}") from None
            _crash(rec, child, phase)
        self.replied_ns = time.time_ns()
        if reply.get("type") == "error":
            if strict:
                raise InfrastructureError(f"the baseline failed while {phase}: {reply.get('message')}")
            outcome, cat, msg = verdict.classify_child_error(reply, phase)
            _finish(rec, outcome, cat, msg)
        if reply.get("type") != expect:
            if strict:
                raise InfrastructureError(f"the baseline child broke the protocol: {str(reply)[:300]}")
            _finish(rec, Outcome.RUNTIME_ERROR, "protocol", f"unexpected reply to {phase}: {str(reply)[:300]}")
        return reply


# the phases whose limit is CPU time (``_Run._recv_within_cpu``): the compile side
CPU_LIMITED = ("compile", "export")


class MachineBusy(Exception):
    """A CPU-limited phase got too little CPU from the machine to be judged."""


class _Stop(Exception):
    """Ends an evaluation with an outcome already written into the record."""


def _timeout(rec, child, phase, limit, cpu=False):
    """A phase ran out of time: take the child's stacks (where it was stuck), then kill it."""
    stacks = ""
    try:
        stacks = child.dump_stacks()
    except Exception:  # noqa: BLE001 - diagnostics only
        pass
    # read before the kill empties the cgroup: a child that ran into its memory limit is out of
    # memory, whether the kernel had OOM-killed it yet or it was still thrashing (how long that
    # lasts depends on the machine's load, so it must not decide between oom and timeout)
    out_of_memory = child.at_memory_limit()
    child.kill()
    where = [l.strip() for l in stacks.splitlines() if "candidate.py" in l][:3]
    what = {
        "compile": "compile (import, trace, lower, compile)",
        "check": "the correctness runs",
        "timing": "the timing runs",
        "export": "lowering",
        "load": "reading the exported program",
    }.get(phase, phase)
    msg = f"{what} exceeded {limit:g} s" + (" of CPU time" if cpu else "")
    if where:
        msg += "\n  stuck at " + "\n  stuck at ".join(where)
    rec["notes"].append("stacks at timeout: " + trim(stacks, 3000) if stacks else "no stacks at timeout")
    if out_of_memory:
        _finish(
            rec,
            Outcome.RUNTIME_ERROR,
            "oom",
            f"the child ran out of memory during {phase}: it was at its memory limit when {msg}",
        )
    # compile side (export, load, compile): the candidate's compile_error compile_timeout (issue 31.5)
    _finish(rec, *verdict.timeout_verdict(phase), msg)


def _finish(rec, outcome, category, message):
    rec["outcome"], rec["error_category"], rec["message"] = outcome, category, trim(message)
    raise _Stop()


def _crash(rec, child, phase):
    rc, sig, oom = child.wait_exit(5.0)
    err = child.stderr_tail()
    tail = "\n".join(err.strip().splitlines()[-8:])
    if oom:
        _finish(rec, Outcome.RUNTIME_ERROR, "oom", f"the child was killed by the memory limit during {phase}")
    if sig in EXTERNAL_SIGNALS:
        raise ChildKilled(phase, sig, tail)
    if sig:
        _finish(rec, Outcome.RUNTIME_ERROR, "crash", f"the child died of {sig} during {phase}\n{tail}")
    _finish(rec, Outcome.RUNTIME_ERROR, "exit", f"the child exited (status {rc}) during {phase}\n{tail}")


def _load_outputs(work, tag, meta, out_specs):
    out = []
    for k, (dt, shape) in enumerate(out_specs):
        try:
            data = work.read(f"out/{tag}/{k}.npy", arrays.NPY_HEADER_CAP + int(np.prod(shape, dtype=np.int64)) * 8 + 1)
        except OSError as exc:
            raise arrays.OutputError("bad_output", f"output {k} of {tag}: {exc}") from None
        out.append(arrays.load_npy_bytes(data, dt, shape))
    return out


def _program_name() -> str:
    return "jaxbench_" + secrets.token_hex(8)


def _hello(child, timeout: float) -> dict:
    """The child's hello (trustworthy: before any candidate code); a child that does not
    start is the harness's failure."""
    try:
        return child.hello(timeout)
    except (PhaseTimeout, ChildGone, SandboxError) as exc:
        raise InfrastructureError(f"the sandboxed child did not start: {exc}; {child.stderr_tail()[-2000:]}") from None


def _open_device(child, phases: dict, timeout: float) -> None:
    """The child opens its device: on an exclusive device (TPU, GPU) only once this thread
    holds the device's lock. The wait is recorded (``device_wait_s``) and counts against no
    limit of the candidate's: no candidate code exists in the child yet, and a child that cannot
    open the device is the harness's failure."""
    try:
        opened = child.open_device(timeout)
    except (PhaseTimeout, ChildGone, SandboxError) as exc:
        raise InfrastructureError(
            f"the sandboxed child could not open the device: {exc}; {child.stderr_tail()[-2000:]}"
        ) from None
    phases["device_wait_s"] = round(opened["wait_s"], 6)
    if isinstance(opened.get("open_s"), (int, float)):
        phases["device_open_s"] = round(opened["open_s"], 6)


def _start_job(
    child, rec: dict, timeouts: dict, *, mode: str, artifacts: dict | None, wl, profile, hardware, manifest_writer
):
    """hello (trustworthy: before any program of the candidate's exists there), the device, the
    files, the job, in a timer child. A candidate's timer also gets the exported XLA baseline,
    compiled there before the candidate's artifact is loaded, to be timed beside it. Returns
    (program name, baseline program name or None)."""
    phases = rec["phases"]
    t = time.monotonic()
    if child.hello_info is None:
        _hello(child, timeouts["startup"])
    phases["startup_s"] = round(phases.get("startup_s", 0) + time.monotonic() - t, 6)
    _open_device(child, phases, timeouts["startup"])
    hello = child.hello_info
    rec["sandbox"] = dict(child.protections)  # complete now (CPU pinning happens at hello)
    target = child.target = _target_for(hardware, hello)
    rec.update(
        hardware=target.slug,
        platform=hello["platform"],
        device_kind=hello.get("device_kind"),
        jax_version=hello.get("jax_version"),
        jaxlib_version=hello.get("jaxlib_version"),
        python_version=hello.get("python"),
    )
    if artifacts is not None:
        # the trusted side's copies, taken when the export child said they were complete
        _write_input(child.in_dir, "candidate.jaxexport", artifacts["program"])
        for i, kernel in enumerate(artifacts["kernels"] or ()):
            _write_input(child.in_dir, f"kernel_{i}.jaxexport", kernel)
        if artifacts["kernels"] is not None:
            _write_twin_builder(child.in_dir)
    _write_input(child.in_dir, "baseline.jaxexport", exported_baseline(wl, profile, hello["platform"]))
    _write_artifact_model(child.in_dir)
    manifest_writer(child.in_dir)
    name = _program_name()
    base_name = _program_name() if mode == "candidate" else None
    # on the cpu target the candidate's kernels run as exported through the generic interpreter
    rec["mode"] = "interpret" if mode == "candidate" and hello["platform"] == "cpu" else "compiled"
    _send_job(
        child,
        rec,
        timeouts,
        {
            "cmd": "job",
            "mode": mode,
            "name": name,
            "config": wl.config(profile),
            "workload": wl.id,
            "profile": profile,
            "baseline_name": base_name,
        },
    )
    return name, base_name


def _send_job(child, rec: dict, timeouts: dict, job: dict) -> None:
    """Give the child its job (still before any candidate code); a child that does not
    acknowledge it is the harness's failure."""
    try:
        ack = _Run(child, timeouts, rec).ask("job", job, "startup")
    except (PhaseTimeout, ChildGone) as exc:
        raise InfrastructureError(f"the child did not accept the job: {exc}") from None
    if ack.get("type") != "ack":
        raise InfrastructureError(f"the child did not accept the job: {str(ack)[:1000]}")


def _load_phase(child, prep: _Prepared, rec, timeouts, *, wl, profile, require_pallas: bool, n_kernels: int | None):
    """The timer child deserializes the judged program (and on the cpu target builds its twin
    from the kernels' interpreted programs: ``n_kernels`` of them) and describes both before
    any of it runs, so the description is the timer's, not the candidate's; the trusted side
    verifies the program that will run (exact signature, allowed custom calls, no host
    callbacks) and applies the Pallas rules to the judged one, whose every operation outside the
    kernels is an operation of the program that runs (TRUST.md 1)."""
    run = _Run(child, timeouts, rec)
    rec["phase"] = "compile"
    reply = run.phase(
        "load",
        {
            "cmd": "load",
            "artifact": "candidate.jaxexport",
            "kernels": None if n_kernels is None else [f"kernel_{i}.jaxexport" for i in range(n_kernels)],
            "max_bytes": MAX_ARTIFACT_BYTES,
        },
        "loaded",
        timeout_key="compile",
    )
    iso = reply.get("isolation") or {}
    if iso.get("role") != "timer" or iso.get("candidate_module") or iso.get("py_files"):
        raise InfrastructureError(f"the timer child is not free of candidate code: {iso}")
    platform = child.hello_info["platform"]
    facts = reply.get("facts") or {}
    expected_in = [[list(s["shape"]), s["dtype"]] for s in prep.input_specs]
    expected_out = [[list(shape), dt] for dt, shape in prep.out_specs]
    rec["artifact"] = artifact_rules.summary(facts)
    rec["host_callbacks"] = list(facts.get("host_callbacks") or [])
    judged = verdict.output_signature_verdict(
        facts.get("out_tree"), facts.get("out_avals"), prep.treedef, prep.out_specs
    )
    if judged:
        _finish(rec, *judged)
    bad = artifact_rules.verify(facts, expected_in, expected_out, hw.export_platform(platform))
    if bad:
        _finish(rec, Outcome.REJECTED, bad[0], bad[1])
    # the judged program: on TPU/GPU the one that runs; on the cpu target its TPU original
    share_facts = facts
    if n_kernels is not None:
        share_facts = reply.get("share_facts") or {"uncountable": ["the timer did not describe the judged program"]}
        bad = artifact_rules.verify(share_facts, expected_in, expected_out, "tpu")
        if bad:
            _finish(rec, Outcome.REJECTED, bad[0], bad[1])
    share = rec["pallas_share"] = pallas_share.assess_artifact(
        share_facts,
        reference_hlo_cost(wl, profile, "tpu" if platform == "cpu" else platform)["outside_flops"],
        require_pallas=require_pallas,
        threshold=pallas_share.threshold_for(wl.id),
    )
    share["judged"] = "timed program" if n_kernels is None else "TPU original of the timed cpu twin"
    rec["has_pallas_call"] = bool(share.get("kernels_unconditional"))
    if not share["ok"]:
        _finish(rec, Outcome.REJECTED, share.get("category") or pallas_share.CATEGORY, share["message"])


def _compile_phase(child, rec, timeouts, *, mode):
    """The timer compiles the verified program for its device."""
    run = _Run(child, timeouts, rec)
    rec["phase"] = "compile"
    reply = run.phase("compile", {"cmd": "compile"}, "compiled")
    rec["phases"]["child_compile"] = {
        k: round(float(v), 6) for k, v in (reply.get("times") or {}).items() if isinstance(v, (int, float))
    }
    if mode != "candidate":
        rec["has_pallas_call"] = False


def _check_phase(child, prep: _Prepared, rec, timeouts, *, mode, atol, rtol) -> dict:
    """Every input set once (check and timing sets alike, indistinguishable to the child);
    each output judged against the exact answer. Returns the outputs per set."""
    run = _Run(child, timeouts, rec)
    rec["phase"] = "check"
    prep.write_sets(child.in_dir, prep.all_ids)
    reply = run.phase("check", {"cmd": "check", "sets": prep.all_ids}, "outputs")
    rec["phases"]["child_exec_s"] = float(reply.get("exec_s") or 0.0)
    cands, failure, errors = {}, None, None
    for sid in prep.all_ids:
        meta = (reply.get("sets") or {}).get(sid)
        bad = verdict.check_claims(meta, prep.treedef, prep.out_specs)
        if bad:
            _finish(rec, Outcome.INCORRECT, bad[0], f"input set {sid}: {bad[1]}")
        try:
            cands[sid] = _load_outputs(child.work, sid, meta, prep.out_specs)
        except arrays.OutputError as exc:
            cat: str | None = exc.category
            _finish(
                rec, Outcome.RUNTIME_ERROR if cat == "bad_output" else Outcome.INCORRECT, cat, f"input set {sid}: {exc}"
            )
        ok, cat, errs, msg = verdict.compare_set(prep.exact[sid], prep.refs[sid], cands[sid], atol, rtol)
        assert errs is not None  # a workload has at least one output
        errors = verdict.merge_errors(errors, errs)
        if not ok and failure is None:
            failure = (cat, f"input set {sid} (seed {prep.seeds[sid]:016x}): {msg}")
    assert errors is not None  # set by the loop: there are at least 2 + 2 input sets
    rec["errors"] = errors
    rec["max_abs_err"] = errors["candidate"]["max_abs"]
    rec["max_rel_err"] = errors["candidate"]["max_rel"]
    if failure is not None:
        if mode == "candidate":
            try:
                extra = prep.extra_refs()
            except Exception:  # noqa: BLE001 - the memorisation probe is best effort
                extra = None
            cheat = verdict.detect_cheat(
                prep.all_ids, prep.inputs, prep.refs, cands, atol, rtol, extra, exacts=prep.exact
            )
            if cheat:
                _finish(rec, Outcome.REJECTED, cheat[0], cheat[1])
        _finish(rec, Outcome.INCORRECT, failure[0], failure[1])
    return cands


def block_order(seed: int, n_blocks: int) -> list[int]:
    """Which program opens each block of the interleaved timing (0: the candidate, 1: the
    baseline), drawn from ``seed`` (recorded: the order can be rebuilt). Blocks come in pairs
    whose order is drawn (AB or BA), so each program opens exactly half of them: random, yet as
    balanced as the ABBA order it replaces (a drift or a cost of going first cancels)."""
    rng = random.Random(seed)
    order: list[int] = []
    while len(order) < n_blocks:
        first = rng.getrandbits(1)
        order += [first, 1 - first]
    return order[:n_blocks]


def _differing(claimed, saved) -> list[int]:
    """The timed calls the timer wrote because their output differed from the checked one."""
    out = sorted({int(i) for i in (claimed or []) if isinstance(i, int) and 0 <= i < ITERS})
    if set(map(str, out)) != set(saved):
        raise InfrastructureError("the timer's list of differing timed outputs does not match the files it wrote")
    return out


def _read_trace(child, name: str, platform: str, space=None, also=()):
    """(Executions of program ``name``, the trace's summary) from the child's one trace file,
    parsed in a resource-limited process together with the programs ``also``
    (:func:`xplane.parse_in_subprocess`: it gets the file's descriptor, never the bytes);
    with ``space``, the summary of an earlier call, from that summary."""
    if space is None:
        work = child.work
        base = "trace/plugins/profile"
        runs = work.listdir(base)
        if len(runs) != 1:
            raise xplane.TraceError(f"expected one profile run, found {len(runs)}")
        files = work.listdir(f"{base}/{runs[0]}")
        pbs = [f for f in files if f.endswith(".xplane.pb")]
        if len(pbs) != 1 or len(files) > 16:
            raise xplane.TraceError(f"expected one .xplane.pb, found {len(pbs)}")
        fd = work.open(f"{base}/{runs[0]}/{pbs[0]}", TRACE_CAP)
        try:
            space = xplane.parse_in_subprocess(fd, [name, *also], platform, expected=ITERS)
        except xplane.ParserUnavailable as exc:  # the host's failure, not the candidate's
            raise InfrastructureError(str(exc)) from None
        finally:
            os.close(fd)
    ex = space.executions(name)
    if len(ex.durations_s) != ITERS:
        raise xplane.TraceError(
            f"the trace holds {len(ex.durations_s)} executions of the program, expected exactly {ITERS}"
        )
    return ex, space


def _timing_phase(
    child,
    prep: _Prepared,
    rec,
    timeouts,
    *,
    wl,
    profile,
    mode,
    name,
    atol,
    rtol,
    checked: dict | None = None,
    base_name: str | None = None,
):
    """Time the candidate (and, interleaved in the same child on the same inputs, the baseline
    program ``base_name``); check the saved timed outputs; parse the trace; the plausibility
    gates. Fills rec["timing"] (and rec["baseline_timing"]); raises _Stop on a failing outcome."""
    run = _Run(child, timeouts, rec)
    phases = rec["phases"]
    rec["phase"] = "timing"
    platform = child.hello_info["platform"]
    order = None
    if base_name:
        seed = secrets.randbits(64)
        order = block_order(seed, -(-ITERS // BLOCK))
        rec["timing_order"] = {"seed": f"{seed:016x}", "block": BLOCK, "baseline_first": sum(order)}
    t_lo = time.time_ns()
    reply = run.phase(
        "timing",
        {
            "cmd": "timing",
            "sets": prep.timing_ids,
            "warmup": WARMUP,
            "iters": ITERS,
            "block": BLOCK,
            "order": order,
        },
        "timed",
        strict=mode != "candidate",
    )
    t_hi = run.replied_ns
    phase_wall = phases["timing_s"]
    phases["child_loop_s"] = float(reply.get("loop_s") or 0.0)
    phases["child_warmup_s"] = float(reply.get("warmup_s") or 0.0)
    phases["child_stop_trace_s"] = float(reply.get("stop_trace_s") or 0.0)
    if base_name:
        # the child's own account of re-timing the baseline: compiling it, its warm-up and
        # timed calls (wall seconds)
        phases["child_baseline_s"] = float(reply.get("baseline_s") or 0.0)
    t_v = time.monotonic()
    m = len(prep.timing_ids)
    saved = reply.get("saved") or {}
    differing = _differing(reply.get("differing"), saved) if mode == "candidate" else []
    # every timed output was hashed by the timer: equal to its input set's checked output (checked
    # above), or written and checked here
    rec["timed_outputs"] = {
        "calls": ITERS,
        "identical_to_checked": ITERS - len(differing),
        "checked_here": len(differing),
    }
    for i in differing:
        sid = prep.timing_ids[i % m]
        meta = saved.get(str(i))
        bad = verdict.check_claims(meta, prep.treedef, prep.out_specs)
        outs = None
        if bad is None:
            try:
                outs = _load_outputs(child.work, f"t{i}", meta, prep.out_specs)
            except arrays.OutputError as exc:
                bad = (exc.category, str(exc))
        judged = verdict.timed_output_verdict(
            prep.exact[sid], prep.refs[sid], (checked or {}).get(sid), outs, bad, atol, rtol
        )
        if judged:
            _finish(rec, judged[0], judged[1], f"timed call {i}: {judged[2]}")

    def walls_of(key):
        return [float(x) for x in (reply.get(key) or []) if isinstance(x, (int, float))]

    walls, b_walls = walls_of("wall_s"), walls_of("baseline_wall_s")
    flops, nbytes = wl.cost(profile)
    target = child.target
    floor = verdict.physical_floor(flops, nbytes, target.peak_flops, target.peak_bandwidth, platform)
    wall_only = environment.get("JAXBENCH_TIMING") == "wall"
    n_events = profile_ns = starts = None
    b_durations = b_walls
    if wall_only:
        if len(walls) != ITERS or (base_name and len(b_walls) != ITERS):
            _finish(rec, Outcome.REJECTED, "trace_invalid", f"{len(walls)} wall-clock samples, expected {ITERS}")
        durations, method = walls, "wall_clock"
    else:
        try:
            ex, space = _read_trace(child, name, platform, also=[base_name] if base_name else [])
            n_events, profile_ns = space.n_events, space.profile_window_ns()
            if base_name:
                b_durations = _read_trace(child, base_name, platform, space)[0].durations_s
        except (OSError, xplane.TraceError) as exc:
            if mode != "candidate":
                raise InfrastructureError(f"baseline trace unusable: {exc}") from None
            _finish(rec, Outcome.REJECTED, "trace_invalid", f"the profiler trace is unusable: {exc}")
        durations, method = ex.durations_s, ex.method
        starts = [s // 1000 for s in ex.starts_ps]
    reason = verdict.plausibility(
        durations,
        starts,
        phase_wall,
        None if wall_only else (t_lo, t_hi),
        floor,
        profile_ns,
        also=b_durations if base_name else (),
    )
    stats = verdict.timing_stats(durations)
    stats.update(
        method=method,
        wall_median_s=float(np.median(walls)) if walls else None,
        phase_wall_s=phase_wall,
        floor_s=floor,
        trace_events=n_events,
        program=name,
    )
    rec["timing"] = stats
    if base_name:
        b_stats = verdict.timing_stats(b_durations)
        b_stats.update(
            method=method,
            wall_median_s=float(np.median(b_walls)) if b_walls else None,
            phase_wall_s=phase_wall,
            floor_s=None,
            trace_events=n_events,
            program=base_name,
        )
        rec["baseline_timing"] = b_stats
    rec["phase"] = "verdict"
    phases["verdict_s"] = round(time.monotonic() - t_v, 6)
    if reason:
        if mode != "candidate":
            raise InfrastructureError(f"baseline timing implausible: {reason}")
        _finish(rec, Outcome.REJECTED, "implausible_timing", reason)
    return stats


def _new_child(platform, limits) -> SandboxedChild:
    child = SandboxedChild(SandboxOptions(platform=platform, limits=limits))
    try:
        child.start()
    except SandboxError as exc:
        raise InfrastructureError(str(exc)) from None
    return child
