"""Factories for leaderboard tests: workloads, hardware, teams, submissions with candidates and
finished evaluations (records carry timings and versions like the evaluator's)."""

from __future__ import annotations

import datetime
import random

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone

from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
from catalog.registry_sync import sync_hardware
from evaluator.models import Evaluation, current_harness_version
from jaxbench.record import CORRECT_OUTCOMES
from leaderboard.aggregates.refresh import rebuild_submission
from submissions.models import Candidate, Membership, Submission, Team

PLAIN_STATIC = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    """Pages render {% static %} without a collectstatic manifest."""
    settings.STORAGES = PLAIN_STATIC


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


def make_workloads(n_production=17, n_kernelbench=33, n_expert=8):
    rows = []
    for i in range(1, n_production + n_kernelbench + 1):
        prod = i <= n_production
        wid = f"{i}{'p' if prod else 'k'}"
        rows.append(
            Workload(
                wid=wid,
                number=i,
                slug=f"{wid}-op{i}",
                public_name=f"{wid}_Op{i}",
                title=f"Operator {i}",
                source="maxtext" if prod else "kernelbench-l2",
                model="Llama-3.1" if prod else "KernelBench L2",
                category="matmul",
                description=f"Workload {i}.",
                expert=prod and i <= n_expert,
                atol=1e-2,
                rtol=1e-2,
                input_names=["x"],
                profiles={"small": {"n": 8}, "full": {"n": 1024}},
                shapes={
                    "small": {
                        "inputs": [{"name": "x", "shape": [8, 8], "dtype": "bfloat16"}],
                        "output": {"shape": [8, 8], "dtype": "bfloat16"},
                    }
                },
                costs={"small": {"flops": 1000 * i, "bytes": 512}, "full": {"flops": 2e9 * i, "bytes": 4e6}},
                reference_source="def workload(x):\n    return x\n",
            )
        )
    Workload.objects.bulk_create(rows)
    return list(Workload.objects.order_by("number"))


@pytest.fixture
def workloads(db):
    return make_workloads()


@pytest.fixture
def hardware(db):
    sync_hardware()
    return {h.slug: h for h in HardwareTarget.objects.all()}


def make_team(name, *members):
    team = Team.objects.create(name=name)
    for i, user in enumerate(members):
        Membership.objects.create(team=team, user=user, role=Membership.OWNER if i == 0 else Membership.MEMBER)
    return team


def record_for(
    speedup, *, baseline=1e-3, spread=0.02, baseline_spread=0.01, jax="0.10.2", harness=None, hardware="cpu"
):
    """A record as the evaluator stores it (``harness``: the current harness version by default)."""
    harness = harness or current_harness_version()
    rec = {
        "jax_version": jax,
        "harness_version": harness,
        "hardware": hardware,
        "profile": "small",
        "timing": {"method": "xla-cpu-events", "median_s": baseline / speedup if speedup else None, "spread": spread},
        "baseline_median_s": baseline,
        "baseline_spread": baseline_spread,
    }
    return rec


def make_submission(
    team,
    hardware,
    samples,
    *,
    kind="trace",
    sampling="sequential",
    method="iterative",
    model_name="Gemini 3 Flash",
    published=True,
    evaluate=True,
    reported=False,
    tokens=None,
    jax="0.10.2",
    harness=None,
    created_at=None,
    precheck_stop=(),
):
    """``samples``: {workload: [(outcome, speedup[, (lo, hi)]), ...]} in index order (with an
    interval: a row timed side by side; without: one timed before intervals existed). With ``evaluate`` every
    candidate gets a finished main-stage evaluation (or a skipped pre-check for the workload
    ids in ``precheck_stop``), measured under ``harness`` (default: the current harness)."""
    sub = Submission.objects.create(
        team=team,
        hardware=hardware,
        kind=kind,
        method=method,
        model_name=model_name,
        sampling=sampling,
        published_at=timezone.now() if published else None,
    )
    if created_at:
        Submission.objects.filter(pk=sub.pk).update(
            created_at=created_at, published_at=created_at if published else None
        )
        sub.refresh_from_db()
    cands = []
    intervals = {}
    for w, seq in samples.items():
        for i, (outcome, speedup, *ci) in enumerate(seq):
            if ci:
                intervals[(w.pk, i)] = ci[0]
            code = f"# {w.wid} sample {i}\nimport jax\n\ndef workload(x):\n    return x * {i}\n"
            c = Candidate(
                submission=sub,
                workload=w,
                index=i,
                round=i // 4,
                parent_index=(i - 1) if i else None,
                filename=f"{w.wid}_{i}.py",
                code=code,
                reported_outcome=outcome if reported else "",
                reported_speedup=speedup if reported else None,
                tokens_in=tokens,
                tokens_out=tokens,
            )
            c.save()
            cands.append((c, outcome, speedup))
    evals = []
    if evaluate:
        now = timezone.now()
        for k, (c, outcome, speedup) in enumerate(cands):
            stop = c.workload.wid in precheck_stop
            correct = outcome in CORRECT_OUTCOMES
            ci = intervals.get((c.workload_id, c.index)) if correct else None
            rec = record_for(speedup if correct else None, jax=jax, harness=harness, hardware=hardware.slug)
            if ci:
                rec["speedup_ci"] = list(ci)
            evals.append(
                Evaluation(
                    candidate=c,
                    hardware=hardware,
                    stage=Evaluation.PRECHECK if stop else Evaluation.MAIN,
                    state=Evaluation.SKIPPED if stop else Evaluation.DONE,
                    outcome=outcome,
                    speedup=speedup if correct else None,
                    speedup_lo=ci[0] if ci else None,
                    speedup_hi=ci[1] if ci else None,
                    message="" if speedup else f"{outcome}: something went wrong",
                    record=rec,
                    code_sha256=c.code_sha256,
                    harness_version=rec["harness_version"],
                    finished_at=now + datetime.timedelta(seconds=k),
                )
            )
        Evaluation.objects.bulk_create(evals)
    return sub


def random_sequence(rng: random.Random, n: int, p_correct=0.4):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < p_correct:
            s = round(rng.uniform(0.3, 3.0), 3)
            out.append(("correct_faster" if s > 1 else "correct_slower", s))
        else:
            out.append((rng.choice(["compile_error", "runtime_error", "timeout", "incorrect", "rejected"]), None))
    return out


def random_interval_sequence(rng: random.Random, n: int, p_correct=0.5):
    """Like ``random_sequence`` but timed side by side: every correct sample carries its interval
    ``(lo, hi)`` and the outcome that interval gives (ties with points on both sides of 1), in
    ``make_submission``'s form (``metrics.from_sequence`` takes ``(outcome, speedup, lo)``)."""
    out = []
    for _ in range(n):
        if rng.random() < p_correct:
            s = round(rng.uniform(0.5, 2.5), 3)
            lo = round(s * rng.uniform(0.6, 1.0), 3)
            hi = round(s * rng.uniform(1.0, 1.4), 3)
            outcome = "correct_faster" if lo > 1 else "correct_slower" if hi < 1 else "correct_tie"
            out.append((outcome, s, (lo, hi)))
        else:
            out.append((rng.choice(["compile_error", "runtime_error", "timeout", "incorrect", "rejected"]), None))
    return out


@pytest.fixture
def users(db):
    User = get_user_model()
    return {
        "alice": User.objects.create_user("alice", password="pw-alice-123"),
        "bob": User.objects.create_user("bob", password="pw-bob-123"),
        "staff": User.objects.create_user("staff", password="pw-staff-123", is_staff=True),
    }


@pytest.fixture
def populated(db, workloads, hardware, users):
    """A cpu leaderboard: two public verified submissions (one tied pair), a private one, a
    withdrawn one, a self-reported trace without evaluations, expert references and
    baselines; aggregates rebuilt."""
    cpu = hardware["cpu"]
    rng = random.Random(42)
    alice_team = make_team("Alpha Lab", users["alice"])
    bob_team = make_team("Bravo Group", users["bob"])
    ws = workloads
    public_a = make_submission(
        alice_team,
        cpu,
        {w: random_sequence(rng, 6, 0.6) for w in ws[:20]},
        method="iterative+context",
        model_name="Gemini 3 Flash",
        tokens=100,
    )
    public_b = make_submission(
        bob_team,
        cpu,
        {w: [("correct_faster", 1.5)] for w in ws[:10]},
        kind="kernels",
        method="hand-written",
        model_name="",
        jax="0.10.1",
    )
    private = make_submission(
        bob_team,
        cpu,
        {w: [("correct_faster", 9.0)] for w in ws[:5]},
        kind="kernels",
        method="SecretMethod",
        model_name="SecretModel",
        published=False,
    )
    withdrawn = make_submission(
        alice_team,
        cpu,
        {w: [("correct_faster", 7.0)] for w in ws[:5]},
        kind="kernels",
        method="WithdrawnMethod",
        model_name="Gemini 3 Flash",
    )
    reported = make_submission(
        alice_team,
        cpu,
        {w: random_sequence(rng, 4, 0.5) for w in ws[:8]},
        method="autocomp",
        model_name="Gemini 3.1 Pro",
        evaluate=False,
        reported=True,
    )
    Submission.objects.filter(pk=withdrawn.pk).update(withdrawn_at=timezone.now())
    for w in ws:
        Baseline.objects.create(
            workload=w, hardware=cpu, profile="small", jax_version="0.10.2", harness_version="1.0.0", median_s=1e-3
        )
    for w in ws[:8]:
        ExpertReference.objects.create(
            workload=w,
            hardware=cpu,
            implementation=f"tokamax.op{w.number}",
            median_s=1e-3 / 2.0,
            speedup=2.0,
            outcome="correct_faster",
            jax_version="0.10.2",
            harness_version="1.0.0",
            configs_tried=25,
        )
    for s in (public_a, public_b, private, withdrawn, reported):
        rebuild_submission(s)
    return {
        "a": public_a,
        "b": public_b,
        "private": private,
        "withdrawn": withdrawn,
        "reported": reported,
        "alice_team": alice_team,
        "bob_team": bob_team,
        "cpu": cpu,
    }
