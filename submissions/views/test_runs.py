"""Test runs on the web (docs/DESIGN.md, "Test runs"): make one (``/test-runs/new/``), delete it,
promote it to a submission ("Submit for the board"). Every view finds the test run through
``Submission.test_runs.owned_by``: anyone but its owner gets a 404, as if it did not exist. The
pages that show a test run's results (its page, the list, the board's preview) belong to the
leaderboard app."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from catalog.models import Workload
from jaxbench import limits
from submissions import intake
from submissions.forms import PromoteTestRunForm, TestRunForm
from submissions.intake.test_runs import LABEL
from submissions.models import Submission
from submissions.views.post_only import post_only
from submissions.views.submissions import _MB, _size, detail_url, known_values, refuse_oversized


def test_run_url(run) -> str:
    """A test run's page (the leaderboard app's), by URL name."""
    return reverse("leaderboard:test-run-detail", args=[run.pk])


def owned_test_run(request, pk) -> Submission:
    run = Submission.test_runs.owned_by(request.user).select_related("team", "hardware").filter(pk=pk).first()
    if run is None:
        raise Http404("No such test run (deleted, expired, or not yours).")
    return run


def _limits() -> dict:
    return {
        "kernels": limits.TEST_RUN_MAX_KERNELS,
        "live": limits.TEST_RUN_MAX_LIVE,
        "days": limits.TEST_RUN_DAYS,
        "kernel_kb": limits.MAX_KERNEL_BYTES // 1024,
    }


def _render_new(request, form=None, status=200, refused=None):
    teams = intake.teams_for(request.user)
    ctx = {
        "form": form or TestRunForm(user=request.user, workloads=Workload.objects.all()),
        "no_team": not teams.exists(),
        "label": LABEL,
        "limits": _limits(),
        "live": Submission.test_runs.owned_by(request.user).count(),
        "refused": refused,
    }
    return render(request, "submissions/test_run_new.html", ctx, status=status)


def max_test_run_bytes() -> int:
    """What the test-run form can legitimately hold: its kernel files, or one zip, and 1 MB of
    fields and framing."""
    return limits.MAX_ZIP_BYTES + limits.TEST_RUN_MAX_KERNELS * limits.MAX_KERNEL_BYTES + _MB


def _too_large(size: int, limit: int) -> str:
    return (
        f"This upload is {_size(size)}; a test run is at most {_size(limit)} ({limits.TEST_RUN_MAX_KERNELS} kernel "
        f"files of at most {limits.MAX_KERNEL_BYTES // 1024} KB, or one .zip). It was refused before being read; "
        "nothing was stored."
    )


@login_required
@refuse_oversized(
    max_test_run_bytes, _too_large, "test-run", page=lambda request, message: _render_new(request, None, 413, message)
)
def test_run_new(request):
    """GET: the form. POST: a test run of the chosen files, then its page."""
    if request.method != "POST":
        return _render_new(request)
    form = TestRunForm(request.POST, request.FILES, user=request.user, workloads=Workload.objects.all())
    if form.is_valid():
        try:
            run = intake.create_test_run(
                form.cleaned_data["team"], request.user, form.cleaned_data["hardware"], form.uploads()
            )
        except intake.IntakeError as exc:
            form.add_intake_errors(exc, {"test_run": None})
        else:
            n = run.candidates.count()
            messages.success(
                request,
                f"Test run #{run.pk} received: {n} kernel{'s' if n != 1 else ''} queued for evaluation on "
                f"{run.hardware.slug}, after the board's submissions. Only you see it; it is deleted "
                f"{limits.TEST_RUN_DAYS} days from now unless you submit it for the board.",
            )
            return redirect(test_run_url(run))
    return _render_new(request, form, status=400)


@login_required
@post_only(lambda request, pk: reverse("leaderboard:test-run-detail", args=[pk]))
def test_run_delete(request, pk):
    run = owned_test_run(request, pk)
    intake.delete_test_run(run)
    messages.success(request, f"Test run #{pk} was deleted with its results.")
    return redirect("leaderboard:test-run-list")


@login_required
def test_run_promote(request, pk):
    """GET: the "Submit for the board" form. POST: the test run becomes a submission of its team
    (the same kernels and verdicts), then the submission's page."""
    run = owned_test_run(request, pk)
    form = PromoteTestRunForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                sub = intake.promote_test_run(run, request.user, form.meta(), publish=form.cleaned_data["publish"])
            except intake.IntakeError as exc:
                form.add_intake_errors(exc, {"model_name": "model", "test_run": None})
            else:
                where = (
                    "It is published: it appears on the leaderboard, in the API and exports."
                    if sub.is_public
                    else f"It is private to {sub.team.name} until you publish it."
                )
                messages.success(
                    request,
                    f"Test run #{sub.pk} is now submission #{sub.pk}: its kernels and their verdicts are kept, "
                    f"nothing is measured again. {where}",
                )
                return redirect(detail_url(sub))
        status = 400
    ctx = {"run": run, "form": form, "label": LABEL, **known_values(request.user)}
    return render(request, "submissions/test_run_promote.html", ctx, status=status)
