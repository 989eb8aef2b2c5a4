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


# -- the evaluator's side: what the broker would get, verdicts, version bumps ------------------


def capture_enqueues(monkeypatch) -> list:
    """Record what would go to the broker instead of sending it: ``[(ids, queue), ...]``."""
    from evaluator import pipeline, runner

    calls = []
    fake = lambda ids, queue: calls.append((list(ids), queue))
    monkeypatch.setattr(pipeline, "enqueue_many", fake)
    monkeypatch.setattr(runner, "enqueue_many", fake)  # the runner's own reference
    return calls


def judged_record(outcome="correct_slower", speedup=0.8, profile="small", **extra) -> dict:
    """A harness record of the versions this portal runs (so identical code may reuse it)."""
    from evaluator import reuse
    from evaluator.models import current_harness_version

    return {
        "outcome": outcome,
        "speedup": speedup,
        "speedup_ci": [speedup * 0.9, speedup * 1.1] if speedup else None,
        "harness_version": current_harness_version(),
        "jax_version": reuse.jax_version(),
        "profile": profile,
        "message": "",
        **extra,
    }


def judge(ev_id: int, record: dict, state=None, worker="w1") -> None:
    """A worker claims the row and stores ``record`` as its verdict (``done`` by default)."""
    from evaluator import runner
    from evaluator.models import Evaluation

    runner.finish(runner.claim(ev_id, worker), record, state or Evaluation.DONE)


def bump_registry(monkeypatch, wid: str, version: int):
    """The worker's registry defines ``version`` of ``wid`` (as after a bump and a deploy)."""
    import dataclasses

    from jaxbench import workloads as registry

    real = registry.get
    bumped = dataclasses.replace(real(wid), version=version)
    monkeypatch.setattr(registry, "get", lambda name: bumped if real(name).id == wid else real(name))
    return bumped


def bump_workload(monkeypatch, wid: str = "12p", version: int = 2):
    """Version ``version`` of ``wid`` synced to the catalogue and in the worker's registry."""
    Workload.objects.filter(wid=wid).update(version=version)
    return bump_registry(monkeypatch, wid, version)


def bump_harness(monkeypatch, version: str = "9.0.0") -> str:
    """A new harness deployed: the portal and its workers run ``version`` from now on."""
    import jaxbench

    monkeypatch.setattr(jaxbench, "HARNESS_VERSION", version)
    return version


def rescored_row(old, speedup: float, **fields):
    """A new finished, correct row of ``old``'s candidate beside ``old`` (another workload or harness
    version: ``workload_version=2``, ``harness_version="9.0.0"``), as a re-score stores it."""
    from evaluator.models import Evaluation

    lo, hi = round(speedup * 0.95, 6), round(speedup * 1.05, 6)
    record = dict(old.record, speedup_ci=[lo, hi])
    record.update({k: v for k, v in fields.items() if k in ("workload_version", "harness_version")})
    return Evaluation.objects.create(
        candidate=old.candidate,
        hardware=old.hardware,
        stage=old.stage,
        state=Evaluation.DONE,
        outcome="correct_faster" if lo > 1 else "correct_slower" if hi < 1 else "correct_tie",
        speedup=speedup,
        speedup_lo=lo,
        speedup_hi=hi,
        record=record,
        code_sha256=old.code_sha256,
        finished_at=old.finished_at,
        **fields,
    )


# -- rows stored before a migration ------------------------------------------------------------


def stored_before(migration: tuple[str, str], make_rows) -> None:
    """Migrate the test database back to ``migration`` (``("evaluator", "0006_...")``), call
    ``make_rows(apps)`` with the models as they were then, and migrate forward to the latest
    migrations again: the back-fills run on those rows as on an upgraded portal's. Needs
    ``django_db(transaction=True)``."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate([migration])
    try:
        make_rows(executor.loader.project_state([migration]).apps)
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


def old_evaluation(apps, candidate, outcome: str, speedup=None, record=None, **fields):
    """A finished main-stage evaluation of ``candidate`` made with the historical model of ``apps``."""
    return apps.get_model("evaluator", "Evaluation").objects.create(
        candidate_id=candidate.pk,
        hardware_id=candidate.submission.hardware_id,
        stage="main",
        state="done",
        outcome=outcome,
        speedup=speedup,
        record=record or {},
        code_sha256=candidate.code_sha256,
        **fields,
    )
