"""The run logs a submission's page shows (``templates/leaderboard/_run_log.html``): for each
finished evaluation, in workload, sample and stage order, its phases with their timings, the
timing summary and what each sandboxed child printed (``jaxbench.run_log``: bounded, control
characters removed; the template escapes it). A page lists the first :data:`MAX_RUN_LOGS`; the
API has every evaluation's (``/api/v1/evaluations/<id>/log/``)."""

from __future__ import annotations

from django.db.models import Case, IntegerField, Value, When
from django.utils.safestring import SafeString, mark_safe

from evaluator import run_logs
from evaluator.models import Evaluation, current_harness_version
from jaxbench.record import OUTCOME_LABELS, format_speedup
from jaxbench.run_log import OUTPUT_CAP
from jaxbench.verdict import review as review_rules
from leaderboard.templatetags.run_log_tags import dur
from leaderboard.views.table_rows import esc

MAX_RUN_LOGS = 50  # evaluations whose logs a page shows (each up to 4 x OUTPUT_CAP characters of output)

_STAGE_LABELS = dict(Evaluation.STAGES)


def submission_run_logs(submission, limit: int = MAX_RUN_LOGS) -> tuple[list[dict], bool]:
    """(up to ``limit`` finished evaluations of ``submission`` with their run logs, whether
    there are more). Rows of earlier workload or harness versions are included and say so."""
    stage_order = Case(When(stage=Evaluation.PRECHECK, then=Value(0)), default=Value(1), output_field=IntegerField())
    qs = (
        Evaluation.objects.filter(candidate__submission=submission, state__in=Evaluation.FINAL_STATES)
        .annotate(stage_order=stage_order)
        .order_by(
            "candidate__workload__level",
            "candidate__workload__number",
            "candidate__index",
            "stage_order",
            "-harness_version",
            "id",
        )
        .values(
            "pk",
            "stage",
            "outcome",
            "workload_version",
            "harness_version",
            "candidate__workload__wid",
            "candidate__workload__version",
            "candidate__index",
            "candidate__filename",
            "hardware__slug",
            *run_logs.FIELDS,
        )
    )
    found = list(qs[: limit + 1])
    harness = current_harness_version()
    out = []
    for ev in found[:limit]:
        log = run_logs.for_row(
            ev["record"], review=ev["review"], reused_from_id=ev["reused_from_id"], state=ev["state"]
        )
        outcome = review_rules.shown_outcome(ev["outcome"], ev["review"]) if ev["outcome"] else ""
        if not outcome:
            outcome = "infrastructure" if ev["state"] == Evaluation.FAILED else (log["outcome"] or ev["state"])
        printed = [o for o in log["outputs"] if o["text"]]
        timing = log["timing"]
        ci = (timing or {}).get("speedup_ci") or [None, None]
        out.append(
            {
                "pk": ev["pk"],
                "wid": ev["candidate__workload__wid"],
                "index": ev["candidate__index"],
                "filename": ev["candidate__filename"],
                "stage": _STAGE_LABELS.get(ev["stage"], ev["stage"]),
                "hardware": ev["hardware__slug"],
                "outcome": outcome,
                "outcome_label": OUTCOME_LABELS.get(outcome, outcome.replace("_", " ")),
                "earlier_version": (
                    f"workload v{ev['workload_version']}, harness {ev['harness_version']}"
                    if ev["workload_version"] != ev["candidate__workload__version"] or ev["harness_version"] != harness
                    else ""
                ),
                "log": log,
                # built here (escaped by format_html): a page renders up to MAX_RUN_LOGS x ~15
                # rows, and template nodes per row cost ~1 ms a log; the candidate's output is
                # rendered by the template, under autoescape
                "phase_rows": _phase_rows(log, outcome),
                "timings": [("candidate", timing["candidate"]), ("XLA baseline", timing["baseline"])] if timing else [],
                "speedup_text": format_speedup(timing["speedup"], *ci) if timing and timing["speedup"] else "",
                "printed": printed,
                "silent": [f"{o['label'].split(' (')[0]} {o['stream']}" for o in log["outputs"] if not o["text"]],
            }
        )
    return out, len(found) > limit


def _phase_rows(log, outcome: str) -> SafeString:
    """The rows of a log's phase table: name, wall, CPU, the child's account, what it does
    (every value escaped; none of them is the candidate's text)."""
    category = f" ({esc(log['error_category'])})" if log["error_category"] else ""
    rows = []
    for p in log["phases"]:
        stopped = p["status"] == "stopped"
        claims = ", ".join(f"{k} {dur(v)}" for k, v in (p["child_s"] or {}).items())
        cls = ' class="stopped"' if stopped else ""
        rows.append(
            f'<tr data-phase="{esc(p["key"])}"{cls}><td>{esc(p["name"])}</td>'
            f'<td class="num">{esc(dur(p["wall_s"]))}</td><td class="num">{esc(dur(p["cpu_s"]))}</td>'
            f'<td class="mono">{esc(claims)}</td><td>{esc(p["what"])}'
            f"{f' <strong>· stopped here: {esc(outcome)}{category}</strong>' if stopped else ''}</td></tr>"
        )
    return mark_safe("\n".join(rows))


__all__ = ["MAX_RUN_LOGS", "OUTPUT_CAP", "submission_run_logs"]
