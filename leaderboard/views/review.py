"""The staff review of verdicts the harness held (TRUST.md 6: held means held).

``/review/``: every held evaluation. ``/review/<pk>/``: one of them with its record (outcome,
notes, why it was held), the candidate's source, both timings (the candidate's and the XLA
baseline's beside it; the guard's figure alone and its re-measurement where the record has
them) and the Accept / Reject form (POST, CSRF, a note). Staff only: anyone else gets a 403
(an anonymous visitor the login page) and nothing is changed.
"""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evaluator import review as evaluator_review
from evaluator.models import Evaluation
from evaluator.rescore import rescore_submission
from jaxbench.record import format_speedup
from jaxbench.verdict import review as review_rules
from leaderboard.highlight import STYLE_DEFS, highlighted
from leaderboard.views.deferred import unlisted
from submissions.models import Submission


def staff_only(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (request.user.is_active and request.user.is_staff):
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapped


def _ms(seconds) -> str:
    try:
        return f"{float(seconds) * 1e3:.4g} ms"
    except (TypeError, ValueError):
        return "—"


def timings(record: dict) -> list[tuple[str, str]]:
    """(label, figure) of every timing the review needs, from the record."""
    rec = record or {}
    c, b = rec.get("timing") or {}, rec.get("baseline_timing") or {}
    ci = rec.get("speedup_ci") or [None, None]
    rows = [
        ("candidate (median)", _ms(c.get("median_s"))),
        ("XLA baseline side by side (median)", _ms(b.get("median_s") or rec.get("baseline_median_s"))),
        ("speedup [95%]", format_speedup(rec.get("speedup"), *ci) if rec.get("speedup") is not None else "—"),
        ("baseline source", rec.get("baseline_source") or "—"),
    ]
    if rec.get("cached_baseline_median_s") is not None:
        rows.append(("XLA baseline alone, cached (the guard's figure)", _ms(rec.get("cached_baseline_median_s"))))
    for note in rec.get("notes") or []:
        if "measured alone again" in str(note):
            rows.append(("the guard's re-measurement", str(note)))
    if c.get("method"):
        rows.append(("timing method", f"{c.get('method')}, n={c.get('n')}, spread {c.get('spread')}"))
    if c.get("floor_s") is not None:
        rows.append(("physical floor", _ms(c.get("floor_s"))))
    return rows


def _measured(ev: Evaluation) -> dict:
    """The measured verdict: the record's own (a rejected row keeps it under review.original)."""
    rec = ev.record or {}
    original = (rec.get("review") or {}).get("original") or {}
    return {
        "outcome": original.get("outcome", rec.get("outcome")),
        "message": original.get("message", rec.get("message")),
    }


@staff_only
def review_list(request):
    held = list(evaluator_review.held_evaluations().defer(*unlisted()))
    items = [
        {
            "ev": ev,
            "speedup": format_speedup(ev.speedup, ev.speedup_lo, ev.speedup_hi) if ev.speedup is not None else "—",
            "reasons": ev.held_reasons,
        }
        for ev in held
    ]
    recent = (
        Evaluation.objects.filter(reviewed_at__isnull=False)
        .select_related("candidate__workload", "candidate__submission", "reviewed_by")
        .defer("record", *unlisted())
        .order_by("-reviewed_at")[:20]
    )
    return render(request, "leaderboard/review_list.html", {"items": items, "recent": recent})


@staff_only
@require_http_methods(["GET", "POST"])
def review_detail(request, pk):
    ev = get_object_or_404(
        Evaluation.objects.select_related("candidate__workload", "candidate__submission__team", "hardware"), pk=pk
    )
    if request.method == "POST":
        decision = request.POST.get("decision")
        if decision not in (Evaluation.ACCEPTED, Evaluation.REJECTED):
            messages.error(request, "Choose Accept or Reject.")
            return redirect("leaderboard:review-detail", pk=pk)
        try:
            evaluator_review.decide(ev.pk, decision, request.user, request.POST.get("note", ""))
        except evaluator_review.NotHeld:
            messages.error(request, f"Evaluation {pk} is not held for review (reviewed already?).")
            return redirect("leaderboard:review-detail", pk=pk)
        messages.success(request, f"Evaluation {pk} {decision}; the leaderboard aggregates are refreshed.")
        return redirect("leaderboard:review-list")
    rec = ev.record or {}
    return render(
        request,
        "leaderboard/review_detail.html",
        {
            "ev": ev,
            "c": ev.candidate,
            "s": ev.candidate.submission,
            "measured": _measured(ev),
            "reasons": ev.held_reasons,
            "notes": rec.get("notes") or [],
            "timings": timings(rec),
            "audit": rec.get("review"),
            "code_html": highlighted(ev.candidate.code),
            "pygments_css": STYLE_DEFS,
            "held": review_rules.is_held(ev.review),
        },
    )


@staff_only
@require_http_methods(["POST"])
def rescore(request, pk):
    """The staff action beside ``manage.py rescore``: schedule the current workload and harness
    versions of one submission's candidates that have no row of them yet (evaluator/rescore.py;
    idempotent). The submission page's progress section follows the new rows."""
    submission = get_object_or_404(Submission.objects.select_related("hardware"), pk=pk)
    got = rescore_submission(submission)
    if got["scheduled"]:
        messages.success(
            request,
            f"Re-scoring #{pk}: {got['scheduled']} new evaluations under the current workload and harness versions "
            f"({got['queued']} queued, {got['reused']} reused); their progress is shown below.",
        )
    else:
        messages.info(
            request,
            f"#{pk} has a result of every workload's current version under the current harness: nothing to re-score.",
        )
    return redirect("leaderboard:submission-detail", pk=pk)
