"""Submit pages (kernel form, trace upload), the own teams' submissions, publish/withdraw, and
the trace format's docs page and JSON Schema."""

import functools
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET

from catalog.models import Workload
from jaxbench import limits
from jaxbench import traces as trace_format
from submissions import intake
from submissions.forms import KernelSubmissionForm, TraceUploadForm
from submissions.models import Submission
from submissions.views.post_only import post_only


def detail_url(submission) -> str:
    """The submission's page (the leaderboard app's), by URL name: named, not imported."""
    return reverse("leaderboard:submission-detail", args=[submission.pk])


def _known(field: str, defaults: list[str], user) -> list[str]:
    """The datalist: well-known values plus those of published and own-team submissions (never
    a test run's: ``Submission.objects`` leaves them out)."""
    qs = Submission.objects.filter(
        Q(published_at__isnull=False, withdrawn_at__isnull=True) | Q(team__in=intake.teams_for(user))
    )
    seen = {v.lower(): v for v in defaults}
    for v in qs.exclude(**{field: ""}).values_list(field, flat=True).distinct()[:200]:
        seen.setdefault(v.lower(), v)
    return sorted(seen.values(), key=str.lower)


def known_values(user) -> dict:
    """The method and model datalists of the submit and promote forms."""
    return {
        "known_methods": _known("method", intake.KNOWN_METHODS, user),
        "known_models": _known("model_name", intake.KNOWN_MODELS, user),
    }


def _render_submit(request, kernel_form=None, trace_form=None, active="kernels", status=200, refused=None):
    workloads = Workload.objects.all()
    teams = intake.teams_for(request.user)
    ctx = {
        "no_team": not teams.exists(),
        "kernel_form": kernel_form or KernelSubmissionForm(user=request.user, workloads=workloads),
        "trace_form": trace_form or TraceUploadForm(user=request.user),
        "active": active,
        **known_values(request.user),
        "limits": {
            "kernel_kb": limits.MAX_KERNEL_BYTES // 1024,
            "zip_mb": limits.MAX_ZIP_BYTES // (1024 * 1024),
            "trace_mb": limits.MAX_TRACE_BYTES // (1024 * 1024),
        },
        "has_workloads": workloads.exists(),
        "refused": refused or {},
    }
    return render(request, "submissions/submit.html", ctx, status=status)


# --- Early size check -----------------------------------------------------------------------
# Django parses a multipart body (spooling files to memory, then disk) the first time anything
# reads request.POST or request.FILES, and CsrfViewMiddleware does so for every POST before the
# view runs. The two upload views are therefore exempt from the middleware and refuse a body
# whose declared length is over what the form can hold before anything reads it; only then is
# the CSRF check run (csrf_protect) and the form parsed. A body cannot be longer than its
# Content-Length: Django's request stream stops there.

_MB = 1024 * 1024


def _declared_length(request) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def max_kernel_form_bytes() -> int:
    """What the kernel form can legitimately hold: one file per workload row at the kernel size
    limit, one zip at its limit, and 1 MB for the other fields and the multipart framing."""
    return limits.MAX_ZIP_BYTES + Workload.objects.count() * limits.MAX_KERNEL_BYTES + _MB


def max_trace_form_bytes() -> int:
    return limits.MAX_TRACE_BYTES + _MB


def _size(n: int) -> str:
    return f"{n / _MB:.1f} MB" if n >= _MB else f"{n // 1024} KB"


def _kernel_limit_message(size: int, limit: int) -> str:
    return (
        f"This upload is {_size(size)}; a kernel submission is at most {_size(limit)} (one .zip of at "
        f"most {limits.MAX_ZIP_BYTES // _MB} MB and files of at most {limits.MAX_KERNEL_BYTES // 1024} KB "
        f"each). It was refused before being read; nothing was stored."
    )


def _trace_limit_message(size: int, limit: int) -> str:
    return (
        f"This upload is {_size(size)}; a trace is at most {limits.MAX_TRACE_BYTES // _MB} MB. "
        f"It was refused before being read; nothing was stored. Split the run into several traces."
    )


def refuse_oversized(limit_fn, message_fn, active, page=None):
    """Decorator for an upload view: a POST declaring more than ``limit_fn()`` bytes gets the
    submit page (status 413) with ``message_fn(size, limit)`` above the ``active`` form (or
    ``page(request, message)``'s response), before its body is read; anything else goes through
    the CSRF check, then the view."""

    def decorate(view):
        protected = csrf_protect(view)

        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            if request.method == "POST":
                size, limit = _declared_length(request), limit_fn()
                if size > limit:
                    if page is not None:
                        return page(request, message_fn(size, limit))
                    return _render_submit(request, active=active, status=413, refused={active: message_fn(size, limit)})
            return protected(request, *args, **kwargs)

        return csrf_exempt(wrapped)

    return decorate


def _created(request, submission):
    if getattr(submission, "was_duplicate", False):
        messages.info(
            request, f"This upload was already received as submission #{submission.pk}; nothing new was stored."
        )
    else:
        n = submission.candidates.count()
        messages.success(
            request,
            f"Submission #{submission.pk} received: {n} candidate{'s' if n != 1 else ''} "
            f"queued for evaluation on {submission.hardware.slug}. It is private to "
            f"{submission.team.name} until you publish it.",
        )
    return redirect(detail_url(submission))


@login_required
@refuse_oversized(max_kernel_form_bytes, _kernel_limit_message, "kernels")
def submit(request):
    """GET: both forms. POST: a kernel submission (a file per workload row, or a zip)."""
    if request.method != "POST":
        return _render_submit(request)
    form = KernelSubmissionForm(request.POST, request.FILES, user=request.user, workloads=Workload.objects.all())
    if form.is_valid():
        try:
            submission = intake.create_kernel_submission(
                form.cleaned_data["team"], request.user, form.cleaned_data["hardware"], form.meta(), form.uploads()
            )
        except intake.IntakeError as exc:
            form.add_intake_errors(exc, {"model_name": "model"})
        else:
            return _created(request, submission)
    return _render_submit(request, kernel_form=form, active="kernels")


@login_required
@post_only(lambda request: reverse("submissions:submit") + "#trace")
@refuse_oversized(max_trace_form_bytes, _trace_limit_message, "trace")
def submit_trace(request):
    form = TraceUploadForm(request.POST, request.FILES, user=request.user)
    if form.is_valid():
        try:
            submission = intake.create_trace_submission(
                form.cleaned_data["team"],
                request.user,
                form.cleaned_data["trace"],
                upload_key=form.cleaned_data.get("upload_key") or None,
                options=form.trajectory_options(),
            )
        except intake.IntakeError as exc:
            form.add_trace_errors(exc)
        else:
            return _created(request, submission)
    return _render_submit(request, trace_form=form, active="trace")


def _member_submission(request, pk):
    submission = Submission.objects.visible_to(request.user).filter(pk=pk).select_related("team").first()
    if submission is None:
        raise Http404("No such submission.")
    if not submission.team.is_member(request.user):
        raise PermissionDenied("Only members of the submission's team can publish or withdraw it.")
    return submission


def _back(request, submission):
    nxt = request.POST.get("next") or request.GET.get("next")
    if nxt and url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(nxt)
    return redirect("leaderboard:submission-list")


@login_required
@post_only(lambda request, pk: reverse("leaderboard:submission-detail", args=[pk]))
def submission_publish(request, pk):
    submission = _member_submission(request, pk)
    submission.publish()
    messages.success(
        request,
        f"Submission #{submission.pk} is public: it appears on the leaderboard and in "
        f"the API and exports. You can withdraw it at any time.",
    )
    return _back(request, submission)


@login_required
@post_only(lambda request, pk: reverse("leaderboard:submission-detail", args=[pk]))
def submission_withdraw(request, pk):
    submission = _member_submission(request, pk)
    submission.withdraw()
    messages.success(
        request, f"Submission #{submission.pk} was withdrawn: it is private to {submission.team.name} again."
    )
    return _back(request, submission)


@require_GET
def trace_schema(request):
    schema = trace_format.json_schema(request.build_absolute_uri(trace_format.SCHEMA_PATH))
    response = JsonResponse(schema, json_dumps_params={"indent": 2}, content_type="application/schema+json")
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_GET
def trace_example(request):
    response = HttpResponse(
        trace_format.dumps_lines(trace_format.example_trace()), content_type="application/x-ndjson; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="example-trace.jsonl"'
    return response


def _field_rows(fields):
    rows = []
    for f in fields:
        s = f.schema()
        if f.kind in ("enum", "const"):
            kind = " | ".join(json.dumps(c) for c in (s.get("enum") or [s.get("const")]))
        else:
            kind = f.kind + (" or null" if f.nullable else "")
        limits = []
        if f.kind == "string" and f.maximum:
            limits.append(f"at most {int(f.maximum):,} characters")
        if f.kind in ("integer", "number") and f.minimum is not None:
            limits.append(f">= {f.minimum:g}")
        rows.append(
            {
                "name": f.name,
                "kind": kind,
                "required": f.required,
                "description": f.description,
                "limits": ", ".join(limits),
            }
        )
    return rows


# the trace format page's ATIF example (tests/jaxbench/traces checks that it parses)
_ATIF_EXAMPLE = {
    "schema_version": "ATIF-v1.4",
    "session_id": "run-43",
    "agent": {"name": "my-agent", "version": "0.3", "model_name": "gemini-2.5-pro"},
    "extra": {"jaxbench": {"hardware": "cpu", "method": "iterative refinement"}},
    "steps": [
        {"step_id": 1, "timestamp": "2026-03-02T10:00:00Z", "source": "user", "message": "Write a Pallas RMSNorm."},
        {
            "step_id": 2,
            "timestamp": "2026-03-02T10:00:09Z",
            "source": "agent",
            "message": "Writing the kernel.",
            "tool_calls": [
                {
                    "tool_call_id": "call_1",
                    "function_name": "write_file",
                    "arguments": {"path": "12p_RMSNorm/kernel.py", "content": "...\ndef workload(x, scale):\n    ..."},
                }
            ],
            "observation": {"results": [{"source_call_id": "call_1", "content": "written"}]},
            "metrics": {"prompt_tokens": 5120, "completion_tokens": 830, "cost_usd": 0.0031},
        },
    ],
}


@require_GET
def trace_format_docs(request):
    example = trace_format.example_trace()
    return render(
        request,
        "submissions/trace_format.html",
        {
            "FORMAT": trace_format.FORMAT,
            "header_fields": _field_rows(trace_format.HEADER_FIELDS),
            "sample_fields": _field_rows(trace_format.SAMPLE_FIELDS),
            "example_lines": [json.dumps(o, ensure_ascii=False) for o in example],
            "example_pretty": json.dumps(example[2], indent=2, ensure_ascii=False),
            "outcomes": trace_format.OUTCOMES,
            "code_arguments": trace_format.CODE_ARGUMENTS,
            "path_arguments": trace_format.PATH_ARGUMENTS,
            "atif_example": json.dumps(_ATIF_EXAMPLE, indent=2),
            "limits": {
                "line_mb": limits.MAX_LINE_BYTES // (1024 * 1024),
                "trace_mb": limits.MAX_TRACE_BYTES // (1024 * 1024),
                "samples": limits.MAX_SAMPLES,
                "code_kb": limits.MAX_CODE_CHARS // 1024,
            },
        },
    )
