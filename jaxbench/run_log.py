"""An evaluation's run log, read from its record (pure: no Django, no I/O).

:func:`run_log` turns a harness record (``record.EvalRecord``, a pre-check's ``LowerRecord``,
a multi-configuration workload's folded record, a reused row's copy of its precedent's, or the
empty record of a row that never ran) into what the submission page and the API show of how the
run went:

* ``phases``: the phases the trusted side timed, in the order they ran, each with its wall
  seconds, its CPU seconds where the harness read them (the compile side's limit is CPU time),
  the child's own account where it gave one (untrusted: the child's claim), what the phase does
  and whether the run stopped there;
* ``timing``: the candidate's and the baseline's samples, medians, spread and p10-p90 interval,
  and the speedup with its interval;
* ``outputs``: each child's captured stdout and stderr, bounded (the last :data:`OUTPUT_CAP`
  characters), with ANSI escapes and control characters removed and a flag saying whether
  anything was left out.

The captured output is the candidate's text (the export child runs its Python): it is bounded
here and must be shown as text (Django's autoescape; never marked safe)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

OUTPUT_CAP = 4000  # characters kept of each captured stream (its end)
TRIM_MARKER = " ... [trimmed]"  # what record.trim appends to text it cut

# (record key, name, record phase it belongs to, is it the work of that phase, what it does)
_PHASES: tuple[tuple[str, str, str, bool, str], ...] = (
    ("setup_s", "setup", "startup", False, "checked the source's size and the baseline given"),
    ("startup_s", "timer start", "startup", False, "started the sandboxed timer child (it never runs candidate code)"),
    ("export_startup_s", "export child start", "startup", False, "started the sandboxed export child"),
    ("prepare_s", "prepare", "startup", False, "drew the input sets and computed the exact answers (trusted side)"),
    ("device_wait_s", "device wait", "startup", False, "waited for the device's lock"),
    ("device_open_s", "device open", "startup", False, "the timer child opened its device"),
    (
        "job_s",
        "job",
        "startup",
        False,
        "gave the timer its job: it compiled the baseline while the export child ran (overlapping the export)",
    ),
    (
        "export_s",
        "export",
        "compile",
        True,
        "the export child imported, traced and exported the candidate's code (its only Python run)",
    ),
    ("export_close_s", "export child close", "compile", False, "closed the export child, every process of it"),
    ("load_s", "load", "compile", True, "the timer read the exported program and verified it before running it"),
    ("compile_s", "compile", "compile", True, "the timer compiled the verified program"),
    ("check_s", "check", "check", True, "ran every input set once and compared each output with the exact answer"),
    (
        "timing_s",
        "timing",
        "timing",
        True,
        "timed the candidate and the XLA baseline, interleaved in blocks on the same inputs",
    ),
    ("verdict_s", "verdict", "verdict", True, "parsed the profiler trace and applied the timing rules"),
    ("close_s", "timer close", "verdict", False, "closed the timer child"),
)
# the child's own account of a phase (untrusted), by the phase's record key
_CLAIMS: dict[str, tuple[str, ...]] = {
    "compile_s": ("child_compile",),
    "check_s": ("child_exec_s",),
    "timing_s": ("child_loop_s", "child_warmup_s", "child_stop_trace_s", "child_baseline_s"),
}
_SPEED_CLAIMS = ("child_loop_s", "child_warmup_s", "child_stop_trace_s", "child_baseline_s")
_CHILDREN = (
    ("export_child_output", "export", "export child (ran the candidate's Python)"),
    ("child_output", "timer", "timer child (ran the exported program)"),
)

# ANSI/VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other ESC + one
# char, and the 8-bit CSI; then the C0 and C1 controls (tab and newline kept), DEL, and the
# Unicode bidirectional controls (text that reads otherwise than it is stored)
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b\n]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class Phase(TypedDict):
    name: str
    key: str  # the record's key (``phases.<key>``)
    wall_s: float
    cpu_s: float | None
    child_s: dict[str, float] | None  # the child's own account (untrusted)
    what: str
    status: str  # "done", or "stopped" where the run ended with a failing outcome


class TimingSummary(TypedDict):
    n: int | None
    median_s: float | None
    min_s: float | None
    max_s: float | None
    spread: float | None  # (p90 - p10) / median
    interval_s: list[float] | None  # [p10, p90] of the samples, when the record has them
    method: str | None


class Timing(TypedDict):
    candidate: TimingSummary | None
    baseline: TimingSummary | None
    speedup: float | None
    speedup_ci: list[float] | None
    baseline_source: str | None
    resolution: dict[str, Any] | None  # the adaptive sampling's account (record.py ``resolution``)


class Output(TypedDict):
    child: str  # "export" or "timer"
    label: str
    stream: str  # "stdout" or "stderr"
    text: str  # cleaned, at most OUTPUT_CAP characters (the end)
    trimmed: bool  # something was left out (by the sandbox's cap, the record or here)
    bytes: int | None  # how many bytes the child wrote to the stream in all, when recorded


class RunLog(TypedDict):
    kind: str  # "evaluation", "lowering" (a pre-check that stopped at the lowering) or "none"
    outcome: str | None
    error_category: str | None
    phase_reached: str | None
    reused: bool
    reused_from: int | None
    speed_withheld: bool
    total_s: float | None
    context: dict[str, Any]
    configurations: list[dict[str, Any]]
    phases: list[Phase]
    timing: Timing | None
    outputs: list[Output]
    remarks: list[str]


def clean_text(text: Any, cap: int = OUTPUT_CAP) -> tuple[str, bool]:
    """``text`` with escape sequences and control characters removed (newlines and tabs kept;
    ``\\r\\n`` and a lone ``\\r`` become newlines) and bounded to its last ``cap`` characters.
    Returns (text, whether anything was cut for the bound)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROLS.sub("", _ESCAPES.sub("", text))
    if len(text) <= cap:
        return text, False
    return text[len(text) - cap :], True


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value and value not in (float("inf"), float("-inf")) else None


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def timing_summary(timing: Any) -> TimingSummary | None:
    """A record's Timing dict in brief (None for none): samples, median, spread, interval."""
    if not isinstance(timing, Mapping):
        return None
    samples = [v for v in (_number(s) for s in timing.get("samples") or []) if v is not None]
    samples.sort()
    n = timing.get("n")
    return {
        "n": int(n) if isinstance(n, int) and not isinstance(n, bool) else (len(samples) or None),
        "median_s": _number(timing.get("median_s")),
        "min_s": _number(timing.get("min_s")),
        "max_s": _number(timing.get("max_s")),
        "spread": _number(timing.get("spread")),
        "interval_s": [_percentile(samples, 0.1), _percentile(samples, 0.9)] if samples else None,
        "method": str(timing["method"]) if timing.get("method") else None,
    }


def _resolution(res: Any) -> dict[str, Any] | None:
    """The record's adaptive-sampling account, its numbers checked (None for none)."""
    if not isinstance(res, Mapping):
        return None
    width, target = _number(res.get("halfwidth")), _number(res.get("target"))
    if width is None or target is None:
        return None
    return {
        "halfwidth": width,
        "target": target,
        "rounds": int(res["rounds"]) if isinstance(res.get("rounds"), int) else None,
        "pairs": int(res["pairs"]) if isinstance(res.get("pairs"), int) else None,
        "stopped": str(res.get("stopped") or ""),
    }


def _claims(phases: Mapping[str, Any], key: str, withheld: bool) -> dict[str, float] | None:
    out: dict[str, float] = {}
    for claim in _CLAIMS.get(key, ()):
        if withheld and claim in _SPEED_CLAIMS:
            continue
        value = phases.get(claim)
        if isinstance(value, Mapping):  # child_compile: {import_s, lower_s, compile_s}
            out.update({str(k): v for k, v in ((k, _number(v)) for k, v in value.items()) if v is not None})
        elif _number(value) is not None:
            out[claim.removeprefix("child_")] = _number(value)  # type: ignore[assignment]
    return out or None


def _phases(record: Mapping[str, Any], failed: bool, withheld: bool) -> list[Phase]:
    phases = record.get("phases")
    phases = phases if isinstance(phases, Mapping) else {}
    out: list[Phase] = []
    lowering = record.get("lowering")
    if isinstance(lowering, Mapping) and _number(lowering.get("duration_s")) is not None:
        # a pre-check's numerics record: the lowering for the accelerator came first
        where = f"{lowering.get('platform') or 'the target'} at {lowering.get('profile') or 'full'} shapes"
        out.append(_phase("pre-check lowering", "lowering.duration_s", lowering["duration_s"], f"lowered for {where}"))
    if record.get("kind") == "lowering":
        where = f"{record.get('platform') or 'the target'} at {record.get('profile') or 'full'} shapes"
        wall = record.get("lower_s", record.get("duration_s"))
        if _number(wall) is not None:
            step = _phase("lowering", "lower_s", wall, f"exported the candidate for {where} and read the program back")
            step["status"] = "stopped" if failed else "done"
            out.append(step)
        return out
    known = {key for key, *_ in _PHASES}
    # where a failing run stopped: the last work phase of the phase the record reached, else
    # the last step of it
    stopped_at: Phase | None = None
    stopped_is_work = False
    for key, name, stage, work, what in _PHASES:
        wall = _number(phases.get(key))
        if wall is None:
            continue
        step = _phase(name, key, wall, what)
        step["cpu_s"] = _number(phases.get(key.removesuffix("_s") + "_cpu_s"))
        step["child_s"] = _claims(phases, key, withheld)
        out.append(step)
        if stage == record.get("phase") and (work or not stopped_is_work):
            stopped_at, stopped_is_work = step, work
    # keys a newer harness records that this reader does not know yet: listed, not dropped
    extra = [k for k in phases if k.endswith("_s") and k not in known and not k.startswith("child_")]
    for key in extra:
        if key in ("total_s", "export_total_s") or key.endswith("_cpu_s"):
            continue
        wall = _number(phases.get(key))
        if wall is not None:
            out.append(_phase(key.removesuffix("_s").replace("_", " "), key, wall, ""))
    if failed and stopped_at is not None:
        stopped_at["status"] = "stopped"
    return out


def _phase(name: str, key: str, wall: Any, what: str) -> Phase:
    return {
        "name": name,
        "key": key,
        "wall_s": _number(wall) or 0.0,
        "cpu_s": None,
        "child_s": None,
        "what": what,
        "status": "done",
    }


def _outputs(record: Mapping[str, Any], cap: int) -> list[Output]:
    out: list[Output] = []
    for key, child, label in _CHILDREN:
        got = record.get(key)
        if not isinstance(got, Mapping):
            continue
        sizes: Mapping[str, Any] = got["bytes"] if isinstance(got.get("bytes"), Mapping) else {}
        for stream in ("stdout", "stderr"):
            if stream not in got:
                continue
            raw = got.get(stream)
            raw = raw if isinstance(raw, str) else ""
            marked = raw.endswith(TRIM_MARKER)  # record.trim cut it (kept its start)
            if marked:
                raw = raw[: -len(TRIM_MARKER)]
            text, cut = clean_text(raw, cap)
            size: Mapping[str, Any] = sizes[stream] if isinstance(sizes.get(stream), Mapping) else {}
            total = size.get("bytes")
            total = int(total) if isinstance(total, int) and not isinstance(total, bool) else None
            dropped = bool(size.get("truncated")) or "bytes dropped ...]" in raw
            out.append(
                {
                    "child": child,
                    "label": label,
                    "stream": stream,
                    "text": text,
                    "trimmed": marked or cut or dropped,
                    "bytes": total,
                }
            )
    return out


def _configurations(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = record.get("configurations")
    if not isinstance(rows, list):
        return []
    out = []
    for c in rows:
        if isinstance(c, Mapping):
            out.append(
                {
                    "name": str(c.get("name") or c.get("profile") or ""),
                    "outcome": c.get("outcome"),
                    "total_s": _number(c.get("total_s", c.get("duration_s"))),
                }
            )
    return out


def run_log(
    record: Mapping[str, Any] | None,
    *,
    reused_from: int | None = None,
    speed_withheld: bool = False,
    output_cap: int = OUTPUT_CAP,
) -> RunLog:
    """The run log of ``record`` (see the module's docstring). ``reused_from``: the evaluation
    whose verdict a reused row carries (its id), when known. ``speed_withheld``: the result is
    held for review (TRUST.md 6): no timing summary and none of the child's timing claims."""
    rec: Mapping[str, Any] = record if isinstance(record, Mapping) else {}
    outcome: str | None = rec["outcome"] if isinstance(rec.get("outcome"), str) else None
    kind = "none" if not rec else ("lowering" if rec.get("kind") == "lowering" else "evaluation")
    if kind == "lowering" and outcome is None and rec.get("ok"):
        outcome = "lowered"
    failed = bool(outcome) and outcome not in ("lowered", "held_for_review") and not str(outcome).startswith("correct_")
    phases = _phases(rec, failed, speed_withheld)
    timing: Timing | None = None
    if not speed_withheld and (rec.get("timing") or rec.get("baseline_timing")):
        ci = rec.get("speedup_ci")
        timing = {
            "candidate": timing_summary(rec.get("timing")),
            "baseline": timing_summary(rec.get("baseline_timing")),
            "speedup": _number(rec.get("speedup")),
            "speedup_ci": [float(x) for x in ci] if isinstance(ci, list) and len(ci) == 2 else None,
            "baseline_source": rec.get("baseline_source") if isinstance(rec.get("baseline_source"), str) else None,
            "resolution": _resolution(rec.get("resolution")),
        }
    total = rec.get("phases", {}).get("total_s") if isinstance(rec.get("phases"), Mapping) else None
    if total is None and kind == "lowering":
        total = rec.get("duration_s")
    reused = bool(rec.get("reused"))
    configurations = _configurations(rec)
    remarks: list[str] = []
    if reused:
        remarks.append(
            "reused: identical code was judged earlier"
            + (f" (evaluation {reused_from})" if reused_from is not None else "")
            + "; the phases, timings and output below are that evaluation's, not a new run"
        )
    if configurations:
        decided = next((c for c in configurations if not str(c["outcome"] or "").startswith("correct_")), None)
        decided = decided or next((c for c in reversed(configurations) if c["outcome"] != "not_run"), None)
        if decided is not None:
            remarks.append(f"phases and output of configuration {decided['name']}, the one that decided the verdict")
    if speed_withheld:
        remarks.append("timings withheld while the result is held for review")
    if kind == "none":
        remarks.append("no run recorded yet")
    context = {
        k: rec.get(k)
        for k in ("hardware", "platform", "mode", "device_kind", "profile", "jax_version", "harness_version")
        if isinstance(rec.get(k), str) and rec.get(k)
    }
    return {
        "kind": kind,
        "outcome": outcome,
        "error_category": rec.get("error_category") if isinstance(rec.get("error_category"), str) else None,
        "phase_reached": rec.get("phase") if isinstance(rec.get("phase"), str) else None,
        "reused": reused,
        "reused_from": reused_from if reused else None,
        "speed_withheld": speed_withheld,
        "total_s": _number(total),
        "context": context,
        "configurations": configurations,
        "phases": phases,
        "timing": timing,
        "outputs": _outputs(rec, output_cap),
        "remarks": remarks,
    }
