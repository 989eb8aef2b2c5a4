"""The signed-in user's teams' submissions (``/submissions/``), each with its evaluation progress."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from evaluator.progress import progress_annotations
from submissions import intake
from submissions.models import Submission
from submissions.views.submissions import detail_url


@login_required
def submission_list(request):
    teams = intake.teams_for(request.user)
    qs = Submission.objects.filter(team__in=teams).select_related("team", "hardware", "created_by")
    team = request.GET.get("team")
    if team:
        qs = qs.filter(team__slug=team)
    page = Paginator(progress_annotations(qs).order_by("-created_at"), 50).get_page(request.GET.get("page"))
    for s in page:
        s.page_url = detail_url(s)
        s.percent = round(100 * s.n_done / s.n_total) if s.n_total else 100
    return render(
        request,
        "leaderboard/submission_list.html",
        {"page": page, "teams": teams, "team": team, "no_team": not teams.exists()},
    )
