"""Small builders for tests: users, teams, workload rows, submissions with candidates."""

from django.contrib.auth import get_user_model

from catalog.models import HardwareTarget, Workload
from catalog.registry_sync import sync_hardware, workload_fields
from submissions.models import Candidate, Membership, Submission, Team


def hardware(slug="cpu") -> HardwareTarget:
    if not HardwareTarget.objects.exists():
        sync_hardware()
    return HardwareTarget.objects.get(slug=slug)


def workload(wid="12p") -> Workload:
    from jaxbench import workloads

    wl = workloads.get(wid)
    obj, _ = Workload.objects.get_or_create(wid=wl.id, defaults=workload_fields(wl))
    return obj


def member(username="ada", team_name="Kernel Crew", role=Membership.OWNER):
    User = get_user_model()
    user = User.objects.filter(username=username).first() or User.objects.create_user(
        username, f"{username}@example.org", "pw-long-enough-1"
    )
    team, _ = Team.objects.get_or_create(name=team_name)
    Membership.objects.get_or_create(team=team, user=user, defaults={"role": role})
    return user, team


def submission(codes, hw="cpu", kind=Submission.KERNELS, team=None, user=None, published=False, **kw):
    """``codes``: list of (workload id, code) in sample order (indices per workload count up)."""
    if team is None:
        user, team = member()
    sub = Submission.objects.create(
        team=team, created_by=user, hardware=hardware(hw), kind=kind, method=kw.pop("method", "test-method"), **kw
    )
    counters = {}
    for wid, code in codes:
        idx = counters.get(wid, 0)
        counters[wid] = idx + 1
        Candidate.objects.create(submission=sub, workload=workload(wid), index=idx, code=code)
    if published:
        sub.publish()
    return sub
