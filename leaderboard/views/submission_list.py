"""The signed-in user's teams' submissions (``/submissions/``), each with its state
(``leaderboard.submission_state``: queued, running, failed, partial, held, measured) and why."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from evaluator.progress import progress_annotations
from leaderboard.submission_state_query import held_results, states_for
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
    states = states_for(page)
    # the team's own list: a held result's measured speed is shown to its team (never publicly)
    held = held_results([pk for pk, st in states.items() if st.n_held], with_speed=True)
    for s in page:
        s.page_url = detail_url(s)
        s.state = states[s.pk]
        s.held = held.get(s.pk, [])
    return render(
        request,
        "leaderboard/submission_list.html",
        {"page": page, "teams": teams, "team": team, "no_team": not teams.exists()},
    )
