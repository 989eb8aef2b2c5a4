"""The signed-in user's teams' submissions (``/submissions/``), each with its state
(``leaderboard.submission_state``: queued, running, failed, partial, held, measured) and why."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from leaderboard.submission_state_query import counts_for, held_results
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
    page = Paginator(qs.order_by("-created_at"), 50).get_page(request.GET.get("page"))
    counts = counts_for(page)  # a settled submission's from its summary, not from its rows
    # the team's own list: a held result's measured speed is shown to its team (never publicly)
    held = held_results([pk for pk, c in counts.items() if c.state.n_held], with_speed=True)
    for s in page:
        s.page_url = detail_url(s)
        c = counts[s.pk]
        s.state, s.n_total, s.n_faster, s.n_tie = c.state, c.state.total, c.faster, c.ties
        s.held = held.get(s.pk, [])
    return render(
        request,
        "leaderboard/submission_list.html",
        {"page": page, "teams": teams, "team": team, "no_team": not teams.exists()},
    )
