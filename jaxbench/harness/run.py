"""One case of one evaluation through its children, phase by phase (trusted side).

:class:`Run` holds what an evaluation carries from phase to phase: the workload and profile,
the timeouts, the timer child (and the export child, for a candidate), the prepared inputs,
the artifacts taken from the export child and the record, built as it goes. Each phase is one
method; every question to a child goes through :meth:`Run.phase` (one place for the timeout,
the crash, the error reply and the protocol breach), and every failure ends the run with its
outcome in the record (:class:`outcomes.Stop`). ``api.evaluate``, ``api.measure_baseline`` and
``api.lower_for_platform`` are short scripts of these calls."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from .. import arrays, environment
from .. import hardware as hw
from ..metrics import roofline
from ..profiling import xplane
from ..profiling.parser_process import TraceParser
from ..record import CONFIDENCE, Outcome, new_record, trim
from ..sandbox import cores, host, pair
from ..sandbox.child import SandboxedChild
from ..sandbox.options import ChildGone, PhaseTimeout, SandboxError
from ..verdict import artifact as artifact_rules
from ..verdict import numerics, pallas_share
from ..verdict import rules as verdict
from ..verdict.artifact import MAX_MODULE_BYTES as MAX_ARTIFACT_BYTES
from ..workloads.base import Workload
from . import outcomes
from .export import MAX_KERNEL_SITES, target_for
from .outcomes import Record, finish
from .prepare import (
    Prepared,
    exported_baseline,
    manifest_specs,
    reference_hlo_cost,
    specs_of,
    target_of,
    write_artifact_model,
    write_input,
    write_twin_builder,
)
from .settings import (
    BLOCK,
    CPU_WALL_SLACK,
    ITERS,
    MAX_TIMING_ROUNDS,
    MIN_TIMING_ROUNDS,
    MIN_TIMING_ROUNDS_DEFAULT,
    RESOLUTION_TARGET,
    RESOLUTION_TARGET_DEFAULT,
    TIMING_BUDGET_S,
    TIMING_BUDGET_S_DEFAULT,
    WARMUP,
    InfrastructureError,
    MeasurementUntrusted,
    cpu_time_limited,
)
from .timer_files import block_order, differing_calls, load_outputs, pair_executions, read_summary, read_trace

Timeouts = dict[str, float]
Message = dict[str, Any]


class MachineBusy(Exception):
    """A CPU-limited phase got too little CPU from the machine to be judged."""


@dataclass
class Artifacts:
    """What the export child wrote, as the trusted side read it once: the judged program and,
    on the cpu target, each kernel's interpreted program (None elsewhere)."""

    program: bytes
    kernels: list[bytes] | None


def program_name() -> str:
    return "jaxbench_" + secrets.token_hex(8)


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def new_timer_child(platform: str, limits: Any) -> SandboxedChild:
    try:
        return pair.timer_child(platform, limits)
    except SandboxError as exc:
        raise InfrastructureError(str(exc)) from None


def child_output(child: SandboxedChild) -> dict[str, Any]:
    """What a child printed (bounded tails) and how much, for the record."""
    return {
        "stdout": trim(child.stdout_tail(), 4000),
        "stderr": trim(child.stderr_tail(), 4000),
        "bytes": child.output_info(),
    }


def greet(child: SandboxedChild, timeout: float) -> Message:
    """The child's hello (trustworthy: before any candidate code); a child that does not
    start is the harness's failure."""
    try:
        return child.hello(timeout)
    except (PhaseTimeout, ChildGone, SandboxError) as exc:
        raise InfrastructureError(f"the sandboxed child did not start: {exc}; {child.stderr_tail()[-2000:]}") from None


def open_device(child: SandboxedChild, timeout: float) -> dict[str, Any]:
    """The child opens its device: on an exclusive device (TPU, GPU) only once this thread holds
    the device's lock (its wait counts against no limit of the candidate's: no candidate code
    exists in the child yet). A child that cannot open the device is the harness's failure."""
    try:
        return child.open_device(timeout)
    except (PhaseTimeout, ChildGone, SandboxError) as exc:
        raise InfrastructureError(
            f"the sandboxed child could not open the device: {exc}; {child.stderr_tail()[-2000:]}"
        ) from None


def _accepted(ack: Message) -> None:
    if ack.get("type") != "ack":
        raise InfrastructureError(f"the child did not accept the job: {str(ack)[:1000]}")


class Run:
    """One case (a candidate's or the baseline's alone) through its children; ``rec`` is its
    record. ``mode``: "candidate" (an export child runs the candidate's Python, the timer
    child judges the artifact beside the baseline) or "baseline" (the XLA baseline alone,
    whose failures are the harness's)."""

    def __init__(
        self,
        wl: Workload,
        profile: str,
        *,
        mode: str,
        timeouts: Timeouts,
        timer: SandboxedChild | None = None,
        exporter: SandboxedChild | None = None,
        hardware: Any = None,
        require_pallas: bool = True,
    ) -> None:
        self.wl, self.profile, self.mode, self.timeouts = wl, profile, mode, timeouts
        self.timer, self.exporter, self.hardware = timer, exporter, hardware
        self.rec: Record = new_record(
            workload=wl.id,
            workload_slug=wl.slug,
            baseline_program="xla" if wl.pallas_baseline is None else "pallas",
            profile=profile,
            require_pallas=bool(require_pallas) if mode == "candidate" else False,
        )
        self.phases: dict[str, Any] = self.rec["phases"]
        self.prep: Prepared | None = None
        self.artifacts: Artifacts | None = None
        self.job_sent: float | None = None  # when start_job(wait=False) sent the timer its job
        self.name = program_name()
        self.base_name = program_name() if mode == "candidate" else None
        self.checked: dict[str, list[np.ndarray]] = {}
        self.replied_ns = 0
        self.contention: dict[str, Any] | None = None
        # the paired speedup of the last timing round's samples, before the systematic widening
        # (speed.speed_verdict widens it; no second bootstrap)
        self.estimate: dict[str, Any] | None = None

    # ------------------------------------------------------------------ asking a child

    def stop(self, outcome: str, category: str | None, message: str) -> NoReturn:
        finish(self.rec, outcome, category, message)

    def ask(self, child: SandboxedChild, phase: str, cmd: Message, key: str | None = None) -> Message:
        key = key or phase
        t = time.monotonic()
        child.send(cmd)
        try:
            if cpu_time_limited(key, child.opt.platform):
                return self.recv_within_cpu(child, phase, self.timeouts[key])
            return child.recv(self.timeouts[key])
        finally:
            self.phases[f"{phase}_s"] = round(time.monotonic() - t, 6)

    def recv_within_cpu(self, child: SandboxedChild, phase: str, budget: float) -> Message:
        """The reply of a phase whose limit is CPU time (``settings.cpu_time_limited``: the
        compile side; the check and timing runs on the cpu target): the child's own work,
        which the machine's load barely moves. Past ``budget`` CPU seconds the candidate's
        program has had its compile (PhaseTimeout: a verdict); a child that did not get that
        much CPU within CPU_WALL_SLACK times the budget of wall time was starved by the
        machine (MachineBusy: infrastructure, retried). Without per-child accounting (no
        cgroup) the budget is wall time, as for every other phase."""
        start = child.cpu_seconds()
        if start is None:
            return child.recv(budget)
        end = time.monotonic() + budget * CPU_WALL_SLACK
        while True:
            try:
                return child.recv(max(0.0, min(0.5, end - time.monotonic())))
            except PhaseTimeout:
                used = (child.cpu_seconds() or start) - start
                self.phases[f"{phase}_cpu_s"] = round(used, 3)
                if used > budget:
                    raise
                if time.monotonic() >= end:
                    raise MachineBusy(
                        f"the child got {used:.1f} s of CPU in {budget * CPU_WALL_SLACK:g} s of {phase}: "
                        "the machine is too busy to tell a slow child from a starved one"
                    ) from None

    def phase(
        self,
        child: SandboxedChild,
        phase: str,
        cmd: Message,
        expect: str,
        *,
        strict: bool = False,
        key: str | None = None,
    ) -> Message:
        """Ask ``child`` for ``phase`` and return its reply of type ``expect``. Anything else
        ends the run with its outcome in the record (raises Stop): a timeout (the child's
        stacks, then it is killed), the child's death, an error reply (classified) or another
        reply (a protocol breach). With ``strict`` (the baseline's own timing) each of them is
        the harness's failure instead (raises InfrastructureError). ``replied_ns``: the wall
        clock when the reply arrived."""
        rec, limit = self.rec, self.timeouts[key or phase]
        try:
            reply = self.ask(child, phase, cmd, key)
        except PhaseTimeout:
            if strict:
                raise InfrastructureError(f"the baseline's {phase} exceeded {limit:g} s") from None
            outcomes.timed_out(rec, child, phase, limit, cpu=f"{phase}_cpu_s" in self.phases)
        except MachineBusy as exc:
            child.kill()
            raise MeasurementUntrusted(str(exc)) from None
        except ChildGone:
            if strict:
                raise InfrastructureError(f"the baseline child died while {phase}") from None
            outcomes.crashed(rec, child, phase)
        self.replied_ns = time.time_ns()
        if reply.get("type") == "error":
            if strict:
                raise InfrastructureError(f"the baseline failed while {phase}: {reply.get('message')}")
            self.stop(*verdict.classify_child_error(reply, phase))
        if reply.get("type") != expect:
            if strict:
                raise InfrastructureError(f"the baseline child broke the protocol: {str(reply)[:300]}")
            self.stop(Outcome.RUNTIME_ERROR, "protocol", f"unexpected reply to {phase}: {str(reply)[:300]}")
        return reply

    def send_job(self, child: SandboxedChild, job: Message) -> None:
        """Give the child its job (still before any candidate code); a child that does not
        acknowledge it is the harness's failure."""
        try:
            ack = self.ask(child, "job", job, "startup")
        except (PhaseTimeout, ChildGone, MachineBusy) as exc:
            raise InfrastructureError(f"the child did not accept the job: {exc}") from None
        _accepted(ack)

    def job_accepted(self) -> None:
        """The timer's acknowledgement of the job ``start_job(wait=False)`` sent (its baseline
        loaded and compiled meanwhile); ``job_s`` from the sending."""
        if self.job_sent is None:
            return
        sent, self.job_sent = self.job_sent, None
        try:
            ack = self.the_timer.recv(max(0.0, self.timeouts["startup"] - (time.monotonic() - sent)))
        except (PhaseTimeout, ChildGone) as exc:
            raise InfrastructureError(f"the child did not accept the job: {exc}") from None
        finally:
            self.phases["job_s"] = round(time.monotonic() - sent, 6)
        _accepted(ack)

    @property
    def the_timer(self) -> SandboxedChild:
        assert self.timer is not None, "this run has no timer child"
        return self.timer

    @property
    def the_prep(self) -> Prepared:
        assert self.prep is not None, "prepare() first"
        return self.prep

    # ------------------------------------------------------------------ the phases

    def prepare(self, n_check: int, n_timing: int) -> None:
        """The input sets, the XLA reference's and the exact answers (trusted side)."""
        t = time.monotonic()
        try:
            self.prep = Prepared(self.wl, self.profile, n_check, n_timing)
        except Exception as exc:  # noqa: BLE001
            raise InfrastructureError(f"inputs/reference failed: {type(exc).__name__}: {exc}") from None
        self.phases["prepare_s"] = round(time.monotonic() - t, 6)

    def start_timer(self) -> Message:
        """The timer's hello (once), recorded with the versions it reports: a candidate stopped
        later is still recorded with the platform and versions it was judged under."""
        timer = self.the_timer
        if timer.hello_info is None:
            t = time.monotonic()
            greet(timer, self.timeouts["startup"])
            self.phases["startup_s"] = round(self.phases.get("startup_s", 0) + time.monotonic() - t, 6)
        hello = timer.hello_info
        assert hello is not None  # set by greet
        self.rec.update(
            platform=timer.opt.platform,
            hardware=self.hardware.slug if isinstance(self.hardware, hw.Target) else self.hardware,
            jax_version=hello.get("jax_version"),
            jaxlib_version=hello.get("jaxlib_version"),
            python_version=hello.get("python"),
            sandbox=dict(timer.protections),
        )
        return hello

    def open_device(self) -> None:
        """The timer opens its device (:func:`open_device`); the wait is recorded."""
        opened = open_device(self.the_timer, self.timeouts["startup"])
        self.phases["device_wait_s"] = round(opened["wait_s"], 6)
        if isinstance(opened.get("open_s"), (int, float)):
            self.phases["device_open_s"] = round(opened["open_s"], 6)

    def export(self, source: str, *, platform: str, device_kind: str | None, phase: str = "compile") -> Artifacts:
        """The export child, to its end: it traces ``workload`` once and writes what
        ``export.target_for`` asks. Each artifact is taken the moment the child says it is
        complete: read at once, checked against the size and digest the child gave for the
        bytes it wrote (a file changed after that is ``rejected``, ``artifact_tampered``), and
        never read again: the timer gets the trusted side's copies. The child is closed (every
        process of it dead) before this returns, whatever happens. ``phase``: what a timeout is
        called and which limit applies ("compile" in an evaluation; "export" in the pre-check)."""
        exporter = self.exporter
        assert exporter is not None, "this run has no export child"
        try:
            t = time.monotonic()
            if exporter.hello_info is None:
                if self.timer is not None:
                    pair.beside(exporter, self.timer)
                greet(exporter, self.timeouts["startup"])
            self.phases["export_startup_s"] = round(time.monotonic() - t, 6)
            arrays.write_manifest(exporter.in_dir, manifest_specs(self.wl, specs_of(self.wl, self.profile)[0]), {})
            write_input(exporter.in_dir, "candidate.py", source)
            job = {"cmd": "job", "mode": "candidate", "name": program_name(), "config": self.wl.config(self.profile)}
            self.send_job(exporter, job)
            self.rec["phase"] = "compile"
            try:
                cmd = {"cmd": "export_run", "target": target_for(platform, device_kind)}
                reply = self.phase(exporter, phase, cmd, "artifacts")
            finally:
                self.phases["export_s"] = self.phases.pop(f"{phase}_s", None)
            program = self._take(exporter, reply.get("program"))
            kernels = reply.get("kernels")
            if kernels is not None:
                if not isinstance(kernels, list) or len(kernels) > MAX_KERNEL_SITES:
                    self.stop(Outcome.REJECTED, "artifact_too_large", f"more than {MAX_KERNEL_SITES} kernel sites")
                kernels = [self._take(exporter, k) for k in kernels]
            self.rec["artifact_bytes"] = len(program)
            self.rec["artifact_digest"] = digest(program)
            if kernels is not None:
                self.rec["kernel_artifacts"] = [{"bytes": len(k), "blake2b": digest(k)} for k in kernels]
            self.artifacts = Artifacts(program, kernels)
            return self.artifacts
        finally:
            t = time.monotonic()
            exporter.close()
            self.rec["export_child_output"] = child_output(exporter)
            if not exporter.dead():
                raise InfrastructureError("the export child is still alive after close")
            self.phases["export_close_s"] = round(time.monotonic() - t, 6)

    def _take(self, exporter: SandboxedChild, info: object) -> bytes:
        """One artifact the export child says it wrote, read now, once (see :meth:`export`)."""
        if not isinstance(info, dict) or not isinstance(info.get("file"), str):
            raise InfrastructureError(f"the export child named no artifact: {str(info)[:300]}")
        name = info["file"]
        if "/" in name or name.startswith("."):
            self.stop(Outcome.REJECTED, "artifact_unreadable", f"the export child named the artifact {name[:100]!r}")
        try:
            data = exporter.work.read(f"artifacts/{name}", MAX_ARTIFACT_BYTES)
        except OSError as exc:
            self.stop(Outcome.REJECTED, "artifact_too_large", f"the exported program could not be read: {exc}")
        if len(data) != info.get("bytes") or digest(data) != info.get("blake2b"):
            self.stop(
                Outcome.REJECTED,
                "artifact_tampered",
                f"{name} changed after it was written ({len(data)} bytes read, {info.get('bytes')} written)",
            )
        return data

    def start_job(self, *, wait: bool = True) -> None:
        """The device, the files and the job, in the timer child (still free of any program of
        the candidate's). A candidate's timer also gets the exported XLA baseline, compiled
        there before the candidate's artifact is loaded, to be timed beside it. ``wait=False``:
        the job is sent and its acknowledgement read by :meth:`job_accepted` (an evaluation
        sends it before the export, so the timer compiles the baseline while the export child
        traces the candidate; the candidate's artifact reaches the timer only at :meth:`load`)."""
        timer, wl, profile = self.the_timer, self.wl, self.profile
        hello = self.start_timer()
        self.open_device()
        self.rec["sandbox"] = dict(timer.protections)  # complete now (CPU pinning happens at hello)
        target = timer.target = target_of(self.hardware, hello)
        self.rec.update(hardware=target.slug, device_kind=hello.get("device_kind"), platform=hello["platform"])
        write_input(
            timer.in_dir,
            "baseline.jaxexport",
            exported_baseline(wl, profile, hello["platform"], hello.get("device_kind")),
        )
        write_artifact_model(timer.in_dir)
        self.the_prep.write_manifest(timer.in_dir)
        # on the cpu target the candidate's kernels run as exported through the generic interpreter
        interpreted = self.mode == "candidate" and hello["platform"] == "cpu"
        self.rec["mode"] = "interpret" if interpreted else "compiled"
        job = {
            "cmd": "job",
            "mode": self.mode,
            "name": self.name,
            "config": wl.config(profile),
            "workload": wl.id,
            "profile": profile,
            "baseline_name": self.base_name,
        }
        if wait:
            self.send_job(timer, job)
        else:
            self.job_sent = time.monotonic()
            timer.send(job)

    def load(self, require_pallas: bool) -> None:
        """The timer deserializes the judged program (and on the cpu target builds its twin
        from the kernels' interpreted programs) and describes both before any of it runs, so
        the description is the timer's, not the candidate's; the trusted side verifies the
        program that will run (exact signature, allowed custom calls, no host callbacks) and
        applies the Pallas rules to the judged one, whose every operation outside the kernels is
        an operation of the program that runs (TRUST.md 1)."""
        timer, prep, rec = self.the_timer, self.the_prep, self.rec
        assert self.artifacts is not None, "export() first"
        kernels = self.artifacts.kernels
        self.job_accepted()
        # the trusted side's copies, taken when the export child said they were complete
        write_input(timer.in_dir, "candidate.jaxexport", self.artifacts.program)
        for i, kernel in enumerate(kernels or ()):
            write_input(timer.in_dir, f"kernel_{i}.jaxexport", kernel)
        if kernels is not None:
            write_twin_builder(timer.in_dir)
        rec["phase"] = "compile"
        cmd = {
            "cmd": "load",
            "artifact": "candidate.jaxexport",
            "kernels": None if kernels is None else [f"kernel_{i}.jaxexport" for i in range(len(kernels))],
            "max_bytes": MAX_ARTIFACT_BYTES,
            # above it the timer counts and reads no further: the refusal is the count's, never a
            # race with the reading's CPU limit that a slower machine loses
            "max_ops": artifact_rules.MAX_OPS,
        }
        reply = self.phase(timer, "load", cmd, "loaded", key="compile")
        iso = reply.get("isolation") or {}
        if iso.get("role") != "timer" or iso.get("candidate_module") or iso.get("py_files"):
            raise InfrastructureError(f"the timer child is not free of candidate code: {iso}")
        platform = timer.hello_info["platform"] if timer.hello_info else "cpu"
        facts = reply.get("facts") or {}
        expected_in = [[list(s["shape"]), s["dtype"]] for s in prep.input_specs]
        expected_out = [[list(shape), dt] for dt, shape in prep.out_specs]
        rec["artifact"] = artifact_rules.summary(facts)
        rec["host_callbacks"] = list(facts.get("host_callbacks") or [])
        judged = verdict.output_signature_verdict(
            facts.get("out_tree"), facts.get("out_avals"), prep.treedef, prep.out_specs
        )
        if judged:
            self.stop(*judged)
        bad = artifact_rules.verify(facts, expected_in, expected_out, hw.export_platform(platform))
        if bad:
            self.stop(Outcome.REJECTED, *bad)
        # the judged program: on TPU/GPU the one that runs; on the cpu target its TPU original
        share_facts = facts
        if kernels is not None:
            share_facts = reply.get("share_facts") or {"uncountable": ["the timer did not describe the judged program"]}
            bad = artifact_rules.verify(share_facts, expected_in, expected_out, "tpu")
            if bad:
                self.stop(Outcome.REJECTED, *bad)
        share = rec["pallas_share"] = pallas_share.assess_artifact(
            share_facts,
            reference_hlo_cost(self.wl, self.profile, "tpu" if platform == "cpu" else platform)["outside_flops"],
            require_pallas=require_pallas,
            threshold=pallas_share.threshold_for(self.wl.id),
        )
        share["judged"] = "timed program" if kernels is None else "TPU original of the timed cpu twin"
        rec["has_pallas_call"] = bool(share.get("kernels_unconditional"))
        if not share["ok"]:
            self.stop(Outcome.REJECTED, share.get("category") or pallas_share.CATEGORY, share["message"])

    def describe(self, data: bytes) -> dict[str, Any]:
        """The facts of an exported program, read in this run's timer child, which never ran
        candidate code and opens no device (the pre-check's reader)."""
        timer = self.the_timer
        greet(timer, self.timeouts["startup"])
        arrays.write_manifest(timer.in_dir, manifest_specs(self.wl, specs_of(self.wl, self.profile)[0]), {})
        write_input(timer.in_dir, "candidate.jaxexport", data)
        write_artifact_model(timer.in_dir)
        self.send_job(timer, {"cmd": "job", "mode": "candidate", "name": program_name()})
        cmd = {
            "cmd": "load",
            "artifact": "candidate.jaxexport",
            "max_bytes": MAX_ARTIFACT_BYTES,
            "max_ops": artifact_rules.MAX_OPS,
        }
        try:
            reply = self.phase(timer, "load", cmd, "loaded", key="export")
        except outcomes.Stop:
            return {"error": self.rec.get("message") or "the artifact could not be read"}
        facts = reply.get("facts")
        return facts if isinstance(facts, dict) else {"error": "no facts"}

    def compile(self) -> None:
        """The timer compiles the verified program for its device."""
        self.rec["phase"] = "compile"
        reply = self.phase(self.the_timer, "compile", {"cmd": "compile"}, "compiled")
        times = reply.get("times") or {}
        self.phases["child_compile"] = {k: round(float(v), 6) for k, v in times.items() if isinstance(v, (int, float))}
        if self.mode != "candidate":
            self.rec["has_pallas_call"] = False

    def check(self) -> None:
        """Every input set once (check and timing sets alike, indistinguishable to the child);
        each output judged against the exact answer."""
        timer, prep, rec, wl = self.the_timer, self.the_prep, self.rec, self.wl
        rec["phase"] = "check"
        prep.write_sets(timer.in_dir, prep.all_ids)
        reply = self.phase(timer, "check", {"cmd": "check", "sets": prep.all_ids}, "outputs")
        self.phases["child_exec_s"] = float(reply.get("exec_s") or 0.0)
        cands: dict[str, list[np.ndarray]] = {}
        failure: tuple[str | None, str] | None = None
        errors: dict[str, Any] | None = None
        for sid in prep.all_ids:
            meta = (reply.get("sets") or {}).get(sid)
            bad = verdict.check_claims(meta, prep.treedef, prep.out_specs)
            if bad:
                self.stop(Outcome.INCORRECT, bad[0], f"input set {sid}: {bad[1]}")
            try:
                cands[sid] = load_outputs(timer.work, sid, prep.out_specs)
            except arrays.OutputError as exc:
                failed = Outcome.RUNTIME_ERROR if exc.category == "bad_output" else Outcome.INCORRECT
                self.stop(failed, exc.category, f"input set {sid}: {exc}")
            ok, cat, errs, msg = verdict.compare_set(prep.exact[sid], prep.refs[sid], cands[sid], wl.atol, wl.rtol)
            assert errs is not None  # a workload has at least one output
            errors = verdict.merge_errors(errors, errs)
            if not ok and failure is None:
                failure = (cat, f"input set {sid} (seed {prep.seeds[sid]:016x}): {msg}")
        assert errors is not None  # set by the loop: there are at least 2 + 2 input sets
        rec["errors"] = errors
        rec["max_abs_err"] = errors["candidate"]["max_abs"]
        rec["max_rel_err"] = errors["candidate"]["max_rel"]
        if failure is not None:
            if self.mode == "candidate":
                try:
                    extra = prep.extra_refs()
                except Exception:  # noqa: BLE001 - the memorisation probe is best effort
                    extra = None
                cheat = verdict.detect_cheat(
                    prep.all_ids, prep.inputs, prep.refs, cands, wl.atol, wl.rtol, extra, exacts=prep.exact
                )
                if cheat:
                    self.stop(Outcome.REJECTED, cheat[0], cheat[1])
            self.stop(Outcome.INCORRECT, failure[0], failure[1])
        self.checked = cands

    def time(self) -> None:
        """Time the candidate (and, interleaved in the same child on the same inputs, the
        baseline) in rounds of ITERS calls until the sampling part of the speedup's interval is
        as narrow as the platform's target, or the rounds or the timing budget run out
        (settings.RESOLUTION_TARGET; the stop rule ``keep_sampling`` reads the width only).
        Each round: its timed outputs checked, its core's load measured, its trace parsed, the
        plausibility gates. Fills rec["timing"] (and rec["baseline_timing"] and
        rec["resolution"]); raises Stop on a failing outcome."""
        rec, phases, base_name = self.rec, self.phases, self.base_name
        rec["phase"] = "timing"
        timer = self.the_timer
        platform = timer.hello_info["platform"] if timer.hello_info else "cpu"
        flops, nbytes = self.wl.cost(self.profile)
        target = timer.target
        floor = verdict.physical_floor(flops, nbytes, target.peak_flops, target.peak_bandwidth, platform)
        limit = roofline.of_peaks(flops, nbytes, hw.peaks_of(target.slug))  # None without sourced peaks
        rec["roofline"] = limit.as_dict() if limit else None  # what the hold for review compares with
        goal = RESOLUTION_TARGET.get(platform, RESOLUTION_TARGET_DEFAULT)
        budget = TIMING_BUDGET_S.get(platform, TIMING_BUDGET_S_DEFAULT)
        least = MIN_TIMING_ROUNDS.get(platform, MIN_TIMING_ROUNDS_DEFAULT)
        rounds: list[dict[str, Any]] = []
        est: dict[str, Any] = {}
        stopped: str | None = None
        width = None
        # one parser process for every round's trace (started at the first: ~0.15 s a process)
        with TraceParser() as parser:
            while stopped is None:
                rounds.append(self._time_round(len(rounds), platform, floor, parser))
                if rounds[-1]["implausible"] or not base_name:
                    break  # the baseline measured alone needs its median only, no interval
                est = numerics.paired_speedup(
                    [x for r in rounds for x in r["b"]],
                    [x for r in rounds for x in r["c"]],
                    CONFIDENCE,
                    block=BLOCK,
                    rounds=len(rounds),
                )
                self.estimate = est
                width = est["sampling_halfwidth"]
                spent = [r["elapsed"] for r in rounds]  # each round's wall, its trace's parsing included
                stopped = numerics.keep_sampling(
                    width, goal, len(rounds), MAX_TIMING_ROUNDS, sum(spent), spent[-1], budget, least
                )
        t_v = time.monotonic()
        phases["timing_s"] = round(sum(r["phase_wall"] for r in rounds), 6)
        phases["timing_rounds"] = len(rounds)
        for key in ("loop_s", "warmup_s", "stop_trace_s") + (("baseline_s",) if base_name else ()):
            # baseline_s: the child's own account of re-timing the baseline beside it
            phases[f"child_{key}"] = sum(r["child"].get(key, 0.0) for r in rounds)
        # the round whose core other work took most of (what the record shows of the load)
        worst = max(
            (r["contention"] for r in rounds if r["contention"]),
            key=lambda c: float(c.get("foreign") or 0) + float(c.get("steal") or 0),
            default=None,
        )

        def stats_of(key: str, wall_key: str, program: str | None, floor_s: float | None) -> dict[str, Any]:
            st = dict(verdict.timing_stats([x for r in rounds for x in r[key]]))
            w = [x for r in rounds for x in r[wall_key]]
            st.update(
                method=rounds[0]["method"],
                wall_median_s=float(np.median(w)) if w else None,
                phase_wall_s=phases["timing_s"],
                floor_s=floor_s,
                trace_events=None if rounds[0]["n_events"] is None else sum(r["n_events"] for r in rounds),
                program=program,
            )
            return st

        # the busiest the timing core's cache neighbours were over a round (speed.py widens for it)
        busy = [float(r["contention"].get("neighbour_busy") or 0.0) for r in rounds if r["contention"]]
        near = next((r["contention"].get("neighbours") for r in rounds if r["contention"]), None)
        rec["timing"] = {
            **stats_of("c", "walls", self.name, floor),
            "contention": worst,
            "neighbours": {"cores": near, "busy": max(busy)} if busy and near is not None else None,
        }
        if base_name:
            rec["baseline_timing"] = stats_of("b", "b_walls", base_name, None)
            ratios = list(est.get("round_speedups") or [])
            rec["resolution"] = {
                "target": goal,
                "halfwidth": width,
                "rounds": len(rounds),
                "pairs": len(rec["timing"]["samples"]),
                "stopped": stopped or "implausible",
                "budget_s": budget,
                "min_rounds": least,
                # one per round; None for a last round whose timing could not be true
                "round_speedups": ratios + [None] * (len(rounds) - len(ratios)),
            }
        rec["phase"] = "verdict"
        # each round's own checks and trace parsing, and the summary here
        checks = sum(max(0.0, r["elapsed"] - r["phase_wall"]) for r in rounds)
        phases["verdict_s"] = round(checks + time.monotonic() - t_v, 6)
        reason = rounds[-1]["implausible"]
        if reason:
            if self.mode != "candidate":
                raise InfrastructureError(f"baseline timing implausible: {reason}")
            self.stop(Outcome.REJECTED, "implausible_timing", reason)

    def _time_round(self, n: int, platform: str, floor: float | None, parser: TraceParser) -> dict[str, Any]:
        """Timing round ``n``: ITERS calls of the candidate (calls ``n * ITERS`` on, in the
        timer's global numbering), with the baseline interleaved in blocks whose order is drawn
        here; on the timing core; then its timed outputs, its core's load, its trace and the
        plausibility gates. Returns the round's samples and facts (``implausible``: None or the
        reason the round's timing cannot be true)."""
        timer, prep, rec = self.the_timer, self.the_prep, self.rec
        candidate, base_name = self.mode == "candidate", self.base_name
        t_round = time.monotonic()
        order = None
        if base_name:
            seed = secrets.randbits(64)
            order = block_order(seed, -(-ITERS // BLOCK))
            drawn = rec.get("timing_order") or {"seeds": [], "block": BLOCK, "baseline_first": 0}
            drawn["seeds"].append(f"{seed:016x}")
            drawn["baseline_first"] += sum(order)
            rec["timing_order"] = drawn
        cmd = {
            "cmd": "timing",
            "sets": prep.timing_ids,
            "warmup": WARMUP if n == 0 else 1,  # later rounds: the programs are warm already
            "iters": ITERS,
            "block": BLOCK,
            "order": order,
            "round": n,
            "offset": n * ITERS,
        }
        with self.on_timing_core():
            t_lo = time.time_ns()
            reply = self.phase(timer, "timing", cmd, "timed", strict=not candidate)
        t_hi = self.replied_ns
        phase_wall = self.phases["timing_s"]  # this round's (Run.ask)
        self._check_timed_outputs(reply, n * ITERS)
        contention = self.contention
        if contention and not contention["trusted"]:
            # after the timed outputs are judged (a wrong output is the candidate's whatever
            # the load): other work on the timer's core is the machine's, never the verdict
            raise MeasurementUntrusted(
                f"the timing core {contention['cores']} spent {contention['foreign']:.0%} of timing round {n + 1} on "
                f"other processes and {contention['steal']:.0%} stolen by the hypervisor "
                f"(at most {cores.CONTENTION_LIMIT:.0%} together is trusted): timing again"
            )

        def walls_of(key: str) -> list[float]:
            return [float(x) for x in (reply.get(key) or []) if isinstance(x, (int, float))]

        walls, b_walls = walls_of("wall_s"), walls_of("baseline_wall_s")
        n_events = profile_ns = starts = None
        b_durations = b_walls
        if environment.get("JAXBENCH_TIMING") == "wall":
            if len(walls) != ITERS or (base_name and len(b_walls) != ITERS):
                self.stop(Outcome.REJECTED, "trace_invalid", f"{len(walls)} wall-clock samples, expected {ITERS}")
            durations, method = walls, "wall_clock"
        else:
            try:
                if base_name and order is not None:
                    space = read_summary(timer.work, [self.name, base_name], platform, n, parser)
                    ex, b_ex = pair_executions(space, self.name, base_name, order)
                    b_durations = b_ex.durations_s
                else:
                    ex, space = read_trace(timer.work, self.name, platform, n, parser)
                n_events, profile_ns = space.n_events, space.profile_window_ns()
            except (OSError, xplane.TraceError) as exc:
                if not candidate:
                    raise InfrastructureError(f"baseline trace unusable: {exc}") from None
                self.stop(Outcome.REJECTED, "trace_invalid", f"the profiler trace is unusable: {exc}")
            durations, method = ex.durations_s, ex.method
            starts = [s // 1000 for s in ex.starts_ps]
        window = None if method == "wall_clock" else (t_lo, t_hi)
        reason = verdict.plausibility(
            durations, starts, phase_wall, window, floor, profile_ns, also=b_durations if base_name else ()
        )
        child = {k: float(reply.get(k) or 0.0) for k in ("loop_s", "warmup_s", "stop_trace_s", "baseline_s")}
        return {
            "c": list(durations),
            "b": list(b_durations) if base_name else [],
            "walls": walls,
            "b_walls": b_walls,
            "method": method,
            "n_events": n_events,
            "phase_wall": phase_wall,
            "contention": contention,
            "child": child,
            "implausible": reason,
            "elapsed": time.monotonic() - t_round,
        }

    @contextlib.contextmanager
    def on_timing_core(self) -> Iterator[None]:
        """The timing phase on its core (cores.py): alone there among the host's timing phases
        (the core's lock; the wait is the harness's time, kept in ``timing_core_wait_s``), on
        the dedicated timing core where there is one (the timer moves there and back), and the
        core's other work over the phase measured into ``self.contention``. Accelerator timers
        hold their device's lock already."""
        timer = self.the_timer
        if timer.opt.platform != "cpu":
            yield
            return
        dedicated = cores.timing_cores()
        home = timer.protections.get("cpu_affinity")
        if dedicated and home:
            # back to the timer's own cores, never onto the timing core itself (a timer pinned
            # before the core was dedicated, e.g. a warm child older than the setting)
            home = [c for c in home if c not in dedicated] or cores.work_cores()
        where = dedicated or list(home or cores.machine_cores())
        with cores.timing_slot(where) as waited:
            self.phases["timing_core_wait_s"] = round(self.phases.get("timing_core_wait_s", 0.0) + waited, 6)
            if dedicated and not timer.confine(dedicated):
                raise InfrastructureError(f"the timer could not be moved onto its timing core {dedicated}")
            own0, stat0 = timer.cpu_seconds(), host.cpu_times()
            try:
                yield
            finally:
                stat1, own1 = host.cpu_times(), timer.cpu_seconds()
                if dedicated and home and not timer.closed:
                    timer.confine(list(home))
        own = None if own0 is None or own1 is None else max(0.0, own1 - own0)
        self.contention = cores.contention(stat0, stat1, where, own, cores.cache_neighbours(where))

    def _check_timed_outputs(self, reply: Message, first: int) -> None:
        """Every timed output of the round whose first call is ``first`` was hashed by the
        timer: equal to its input set's checked output (checked already), or written and
        checked here."""
        timer, prep, wl = self.the_timer, self.the_prep, self.wl
        saved = reply.get("saved") or {}
        differing = differing_calls(reply.get("differing"), saved, first) if self.mode == "candidate" else []
        done = self.rec.get("timed_outputs") or {"calls": 0, "identical_to_checked": 0, "checked_here": 0}
        self.rec["timed_outputs"] = {
            "calls": done["calls"] + ITERS,
            "identical_to_checked": done["identical_to_checked"] + ITERS - len(differing),
            "checked_here": done["checked_here"] + len(differing),
        }
        m = len(prep.timing_ids)
        for i in differing:
            sid = prep.timing_ids[i % m]
            meta = saved.get(str(i))
            bad = verdict.check_claims(meta, prep.treedef, prep.out_specs)
            outs = None
            if bad is None:
                try:
                    outs = load_outputs(timer.work, f"t{i}", prep.out_specs)
                except arrays.OutputError as exc:
                    bad = (exc.category, str(exc))
            judged = verdict.timed_output_verdict(
                prep.exact[sid], prep.refs[sid], self.checked.get(sid), outs, bad, wl.atol, wl.rtol
            )
            if judged:
                self.stop(judged[0], judged[1], f"timed call {i}: {judged[2]}")
