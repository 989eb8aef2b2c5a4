from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from submissions.forms import JoinTeamForm, TeamForm
from submissions.models import Membership, Team
from submissions.views.post_only import post_only


def _team_page(request, slug, **_):
    return reverse("submissions:team-detail", args=[slug])


@login_required
def team_create(request):
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            team = form.save()
            Membership.objects.create(team=team, user=request.user, role=Membership.OWNER)
        messages.success(request, f"Team {team.name} created. Share its join link to invite others.")
        return redirect(team)
    return render(request, "submissions/team_form.html", {"form": form})


def _member_team(request, slug):
    team = get_object_or_404(Team, slug=slug)
    if not (team.is_member(request.user) or request.user.is_staff):
        raise Http404("No such team.")
    return team


@login_required
def team_detail(request, slug):
    team = _member_team(request, slug)
    join_url = request.build_absolute_uri(f"/teams/join/{team.join_code}/")
    return render(
        request,
        "submissions/team_detail.html",
        {
            "team": team,
            "memberships": team.memberships.select_related("user"),
            "is_owner": team.is_owner(request.user),
            "join_url": join_url,
            "submissions": team.submissions.select_related("hardware")[:50],
        },
    )


@login_required
def team_join(request, code=None):
    form = JoinTeamForm(request.POST or None, initial={"code": code} if code else None)
    if request.method == "POST" and form.is_valid():
        team = form.team
        _, created = Membership.objects.get_or_create(team=team, user=request.user)
        messages.success(request, f"You joined {team.name}." if created else f"You are already in {team.name}.")
        return redirect(team)
    team = Team.objects.filter(join_code=code).first() if code else None
    return render(request, "submissions/team_join.html", {"form": form, "team": team})


@login_required
@post_only(_team_page)
def team_remove_member(request, slug, user_id):
    team = _member_team(request, slug)
    if not team.is_owner(request.user):
        messages.error(request, "Only owners can remove members.")
        return redirect(team)
    membership = team.memberships.filter(user_id=user_id).first()
    if membership is None:
        messages.error(request, "That user is not a member.")
    elif membership.role == Membership.OWNER and team.memberships.filter(role=Membership.OWNER).count() == 1:
        messages.error(request, "A team keeps at least one owner.")
    else:
        membership.delete()
        messages.success(request, f"{membership.user.username} was removed from {team.name}.")
    return redirect(team)


@login_required
@post_only(_team_page)
def team_leave(request, slug):
    team = _member_team(request, slug)
    membership = team.memberships.filter(user=request.user).first()
    if (
        membership
        and membership.role == Membership.OWNER
        and team.memberships.filter(role=Membership.OWNER).count() == 1
        and team.memberships.count() > 1
    ):
        messages.error(request, "Hand ownership to another member before leaving.")
        return redirect(team)
    if membership:
        membership.delete()
        messages.success(request, f"You left {team.name}.")
    return redirect("account")


@login_required
@post_only(_team_page)
def team_rotate_code(request, slug):
    team = _member_team(request, slug)
    if not team.is_owner(request.user):
        messages.error(request, "Only owners can rotate the join code.")
    else:
        team.rotate_join_code()
        messages.success(request, "New join code issued; the old link no longer works.")
    return redirect(team)


@login_required
@post_only(_team_page)
def team_make_owner(request, slug, user_id):
    team = _member_team(request, slug)
    if not team.is_owner(request.user):
        messages.error(request, "Only owners can promote members.")
    else:
        team.memberships.filter(user_id=user_id).update(role=Membership.OWNER)
        messages.success(request, "Member promoted to owner.")
    return redirect(team)
