"""Leaderboard load benchmark (a benchmark, not a test).

Fills a database with S submissions x W workloads x K samples (default 200 x 50 x 144 = 1.44 M
candidates and 1.44 M finished evaluations, bulk-inserted; every submission a 7,200-sample
trace), builds the leaderboard aggregates directly from the generated samples through the same
folding code the worker uses (``aggregates.sample_from_evaluation`` -> ``fold`` ->
``summary_from_states``), then measures:

* ``refresh_for_evaluation`` after one newly finished evaluation (target < 20 ms);
* under gunicorn with 2 workers: median and p95 latency (sequential requests) and requests per
  second (concurrent clients) of the leaderboard, a submission page, a workload page, the
  leaderboard API and a submission's detail and evaluations over the API; once with the portal's
  settings (per-process cache of the leaderboard data and figures) and once with caching disabled
  (every request recomputes from the aggregates);
* every page and API endpoint (``benchmarks/endpoints_load.py``: each GET route of the URL
  resolver, with its filters, pagination and exports, as an anonymous visitor, a team member and
  staff), p50/p95 cold (caching disabled) and warm (cached), and the first request of a freshly
  started worker, each against the same 100 ms budget.

Every row is measured under the current harness (``jaxbench.HARNESS_VERSION``: the boards fold
no other), a fifth of the correct ones without an interval. A few correct verdicts are reviewed
by staff (accepted, or rejected: outcome ``rejected``), and in every tenth submission (half of
them private, a member's team's) some are held for review (``REVIEW_SHARES``). With
``--rescored-share F`` a share F of the submissions also has an earlier-harness row per
candidate (as after a harness bump and a re-score: kept, listed on their pages, never folded),
and the board's ``?versions=all`` view (``leaderboard/board_versions.py``, recomputed from those
rows) is measured and printed apart from the targets.

The database is DATABASE_URL's (``--db`` defaults to its backend; unset: a SQLite file in the
work dir); with ``--db both`` the other backend gets its own (a SQLite file in the work dir, or
``jaxbench_leaderboard_bench`` on the local PostgreSQL server). A database is filled only when
it is empty or was filled by this benchmark (never one with other data); ``--keep`` keeps it
and ``--reuse`` measures it again as it is (new migrations applied), ``--fill-only`` fills it
and measures nothing. Usage:

    .venv/bin/python benchmarks/leaderboard_load.py                  # SQLite, full size
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/jaxbench_load .venv/bin/python benchmarks/leaderboard_load.py
    .venv/bin/python benchmarks/leaderboard_load.py --db both        # SQLite, then PostgreSQL
    .venv/bin/python benchmarks/leaderboard_load.py --db sqlite --submissions 20 --samples 20
    DATABASE_URL=sqlite:////tmp/lb.sqlite3 .venv/bin/python benchmarks/leaderboard_load.py --fill-only
    DATABASE_URL=sqlite:////tmp/lb.sqlite3 .venv/bin/python benchmarks/leaderboard_load.py --reuse --seconds 0
    .venv/bin/python benchmarks/leaderboard_load.py --db sqlite --rescored-share 0.05 --no-upload
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import pathlib
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from urllib.parse import urlsplit, urlunsplit

import endpoints_load  # a sibling script: every page and endpoint of the portal, timed

ROOT = pathlib.Path(__file__).resolve().parent.parent
PY = sys.executable
PG_DB = "jaxbench_leaderboard_bench"
HW = "tpu-v6e"
ALL_VERSIONS = "all versions"  # the board under ?versions=all (with --rescored-share)
INFO_PAGES = {ALL_VERSIONS}  # measured and printed, but not among the targets
EARLIER_HARNESS = "1.0.0"  # --rescored-share: the harness the re-scored submissions were first measured under
# shares of the correct main rows held for review by the harness (in every HELD_EVERY-th submission
# only, half of them private: a held verdict keeps its submission off the ranking until reviewed),
# accepted and rejected by staff (in every submission)
REVIEW_SHARES = (0.002, 0.0002, 0.0003)
HELD_EVERY = 10
MEMBER, STAFF = "bench-member", "bench-staff"  # a team member (teams 0 and 19: private entries) and staff


# --------------------------------------------------------------------------------------------
# Child: one database backend
# --------------------------------------------------------------------------------------------


def _django():
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django  # deferred: only the child process (one database backend) uses Django

    django.setup()


def _make_workloads(n, n_level2=0):
    # deferred: runs in the child process only, after _django() has set Django up
    from catalog.models import Workload

    n_prod = round(n * 17 / 50)
    rows = []
    for i in range(1, n + 1):
        prod = i <= n_prod
        wid = f"{i}{'p' if prod else 'k'}"
        rows.append(
            Workload(
                wid=wid,
                number=i,
                slug=f"{wid}-bench-op{i}",
                public_name=f"{wid}_BenchOp{i}",
                title=f"Bench operator {i}",
                source="maxtext" if prod else "kernelbench-l2",
                model="Llama-3.1" if prod else "KernelBench L2",
                category="matmul",
                description="synthetic",
                expert=prod and i <= round(n * 8 / 50),
                atol=1e-2,
                rtol=1e-2,
                input_names=["x"],
                profiles={"full": {"n": 4096}, "small": {"n": 64}},
                shapes={
                    "full": {
                        "inputs": [{"name": "x", "shape": [4096, 4096], "dtype": "bfloat16"}],
                        "output": {"shape": [4096, 4096], "dtype": "bfloat16"},
                    }
                },
                costs={
                    "full": {"flops": 1.4e11 * (1 + i % 7), "bytes": 1e8 * (1 + i % 5)},
                    "small": {"flops": 5e5, "bytes": 3e4},
                },
                reference_source="def workload(x):\n    return x\n",
            )
        )
    # level 2's twins of the first production tasks, timed against a Pallas baseline (a level's own
    # board, set tab, workload list and pages)
    for i in range(1, n_level2 + 1):
        rows.append(
            Workload(
                wid=f"l2-{i}p",
                level=2,
                number=i,
                slug=f"l2-{i}p-bench-op{i}",
                public_name=f"{i}p_BenchOp{i}",
                title=f"Bench operator {i} (Pallas baseline)",
                source="maxtext",
                model="Llama-3.1",
                category="matmul",
                description="synthetic",
                atol=1e-2,
                rtol=1e-2,
                input_names=["x"],
                profiles={"full": {"n": 4096}, "small": {"n": 64}},
                shapes=rows[i - 1].shapes,
                costs=rows[i - 1].costs,
                reference_source="def workload(x):\n    return x\n",
                baseline_program="pallas",
                platforms=["cpu", "tpu"],
                platform_note="a Pallas TPU baseline",
            )
        )
    Workload.objects.bulk_create(rows)
    return list(Workload.objects.order_by("level", "number"))


def _insert(table, columns, rows):
    """Bulk insert plain tuples: executemany on SQLite, COPY on PostgreSQL."""
    # deferred: runs in the child process only, after _django() has set Django up
    from django.db import connection

    if not rows:
        return
    if connection.vendor == "postgresql":
        raw = connection.connection
        with raw.cursor() as cur:
            with cur.copy(f'COPY {table} ({", ".join(columns)}) FROM STDIN') as cp:
                for r in rows:
                    cp.write_row(r)
    else:
        marks = ", ".join(["%s"] * len(columns))
        with connection.cursor() as cur:
            cur.executemany(f'INSERT INTO {table} ({", ".join(columns)}) VALUES ({marks})', rows)


def _defaults(model, columns) -> dict:
    """{column: default} of the model's NOT NULL columns that ``columns`` leaves out."""
    out = {}
    for f in model._meta.concrete_fields:
        if f.column not in columns and not f.null and not f.primary_key:
            v = f.get_default()
            out[f.column] = json.dumps(v) if isinstance(v, (dict, list)) else v
    return out


def _sample_outcomes(rng: random.Random, skill: float, k: int, sequential: bool, legacy_share: float = 0.2):
    """(outcome, speedup, [lo, hi] or None) per index: failures dominate, correctness and speed
    improve along a sequential search. Correct samples are timed side by side (a 95% interval
    of a few percent, the outcome it gives: ties around 1.0) except ``legacy_share`` of them,
    without an interval (classified by the point, as a row timed before intervals existed)."""
    from jaxbench.record import speed_outcome  # deferred: only the child process has the repository on its path

    out = []
    for i in range(k):
        progress = (i / max(1, k - 1)) if sequential else 0.5
        p_correct = min(0.9, skill * (0.4 + 1.2 * progress))
        r = rng.random()
        if r < p_correct:
            s = math.exp(rng.gauss(-0.15 + 0.5 * progress * skill, 0.35))
            s = round(max(0.05, min(s, 12.0)), 4)
            if rng.random() < legacy_share:
                out.append(("correct_faster" if s > 1 else "correct_slower", s, None))
            else:
                half = rng.uniform(0.02, 0.08)
                ci = [round(s * (1 - half), 4), round(s * (1 + half), 4)]
                out.append((speed_outcome(*ci), s, ci))
        else:
            out.append(
                (
                    rng.choices(
                        ["compile_error", "runtime_error", "incorrect", "timeout", "rejected"],
                        weights=[50, 25, 15, 5, 5],
                    )[0],
                    None,
                    None,
                )
            )
    return out


def _evaluation_row(cand_id, hw_id, stage, state, outcome, speedup, ci, record, sha, finished, version, review=None):
    """One evaluation row as the raw insert writes it (``ev_cols`` in ``populate``); ``review``:
    (state, reviewed_by_id, message) of a reviewed or held row."""
    state_, reviewer, message = review or ("", None, None)
    return (
        cand_id,
        hw_id,
        stage,
        state,
        outcome,
        speedup,
        ci[0] if ci else None,
        ci[1] if ci else None,
        message if message is not None else "" if speedup is not None else f"{outcome}: bench failure",
        json.dumps(record),
        sha,
        1,
        "bench",
        finished,
        finished,
        finished,
        finished,
        "[]",
        "user",
        state_,
        "bench review" if reviewer else "",
        finished if reviewer else None,
        reviewer,
        version,
        False,
        record["harness_version"],
        False,
    )


def _review(rng: random.Random, outcome: str, speedup, ci, record: dict, staff_id: int, finished, may_hold: bool):
    """A correct main row's review state (``REVIEW_SHARES``): held by the harness (not folded, its
    speed withheld), accepted, or rejected by staff (outcome ``rejected``, the measured verdict
    under the record's review). Returns (outcome, speedup, ci, record, review) as stored."""
    from jaxbench.verdict import review as review_rules  # deferred: only the child has the repository on its path

    r = rng.random()
    held, accepted, rejected = REVIEW_SHARES
    held = held if may_hold else 0.0
    audit = {"by": "bench-staff", "at": finished.isoformat(), "note": "bench review"}
    if r < held:
        record = dict(record, held_for_review=True, notes=["speedup interval reaches above 10x: held for review"])
        return outcome, speedup, ci, record, (review_rules.HELD, None, None)
    if r < held + accepted:
        return (
            outcome,
            speedup,
            ci,
            review_rules.accepted_record(record, audit),
            (review_rules.ACCEPTED, staff_id, None),
        )
    if r < held + accepted + rejected:
        record = review_rules.rejected_record(dict(record, outcome=outcome, speedup=speedup, speedup_ci=ci), audit)
        return record["outcome"], None, None, record, (review_rules.REJECTED, staff_id, record["message"])
    return outcome, speedup, ci, record, None


def populate(n_subs, n_workloads, n_samples, seed=1, rescored_share=0.0, n_level2=0):
    # deferred: runs in the child process only, after _django() has set Django up
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from catalog.models import Baseline, ExpertReference, HardwareTarget
    from catalog.registry_sync import sync_hardware
    from evaluator.models import Evaluation, current_harness_version
    from leaderboard import aggregates as A
    from leaderboard.models import SubmissionSummary, WorkloadResult
    from submissions.models import Candidate, Membership, Submission, Team

    harness = current_harness_version()  # every folded row: the current harness
    rng = random.Random(seed)
    review_rng = random.Random(seed + 1)  # apart: the outcomes stay those of the runs before reviews were seeded
    t0 = time.perf_counter()
    sync_hardware()
    hw = HardwareTarget.objects.get(slug=HW)
    workloads = _make_workloads(n_workloads, n_level2)
    wmap = A.workload_set_map()
    sizes = A.set_sizes()
    Baseline.objects.bulk_create(
        [
            Baseline(
                workload=w,
                hardware=hw,
                profile="full",
                jax_version="0.10.2",
                harness_version=harness,
                median_s=2e-4 * (1 + w.number % 9),
            )
            for w in workloads
        ]
    )
    ExpertReference.objects.bulk_create(
        [
            ExpertReference(
                workload=w,
                hardware=hw,
                implementation=f"tokamax.bench{w.number}",
                median_s=1e-4,
                speedup=round(1.2 + (w.number % 5) * 0.4, 2),
                outcome="correct_faster",
                jax_version="0.10.2",
                harness_version=harness,
                configs_tried=25,
            )
            for w in workloads
            if w.expert
        ]
    )
    teams = Team.objects.bulk_create([Team(name=f"Bench team {i}", slug=f"bench-team-{i}") for i in range(40)])
    users = get_user_model().objects
    staff = users.create_user(STAFF, is_staff=True)
    member = users.create_user(MEMBER)
    Membership.objects.bulk_create(
        [Membership(team=teams[0], user=member, role=Membership.OWNER), Membership(team=teams[19], user=member)]
    )
    methods = ["iterative", "iterative+context", "autocomp", "best-of-n", "evolutionary", "tree-search"]
    models = ["Gemini 3 Flash", "Gemini 3.1 Pro", "Claude", "GPT", "Qwen", "DeepSeek"]
    now = timezone.now()
    subs = []
    for i in range(n_subs):
        independent = i % 5 == 4
        subs.append(
            Submission(
                team=teams[i % len(teams)],
                hardware=hw,
                kind="trace",
                method=methods[i % len(methods)] if not independent else "best-of-n",
                model_name=models[(i // 3) % len(models)],
                sampling="independent" if independent else "sequential",
                budget=n_samples,
                published_at=None if i % 20 == 19 else now - datetime.timedelta(hours=i),
                upload_key=f"bench-{i}",
            )
        )
    subs = Submission.objects.bulk_create(subs)
    t_meta = time.perf_counter() - t0

    cand_table, ev_table = Candidate._meta.db_table, Evaluation._meta.db_table
    cand_cols = [
        "id",
        "submission_id",
        "workload_id",
        "index",
        "round",
        "parent_index",
        "filename",
        "code",
        "code_sha256",
        "reported_outcome",
        "reported_speedup",
        "tokens_in",
        "tokens_out",
        "cost_usd",
    ]
    ev_cols = [
        "candidate_id",
        "hardware_id",
        "stage",
        "state",
        "outcome",
        "speedup",
        "speedup_lo",
        "speedup_hi",
        "message",
        "record",
        "code_sha256",
        "attempts",
        "worker",
        "finished_at",
        "created_at",
        "enqueued_at",
        "started_at",
        "failures",
        "lane",
        "review",
        "review_note",
        "reviewed_at",
        "reviewed_by_id",
        "workload_version",
        "workload_version_assumed",
        "harness_version",
        "harness_version_assumed",
    ]
    quote = connection.ops.quote_name
    # every other NOT NULL column (one a later migration adds) with its model default
    cand_rest, ev_rest = _defaults(Candidate, cand_cols), _defaults(Evaluation, ev_cols)
    cand_cols_q = [quote(c) for c in [*cand_cols, *cand_rest]]
    ev_cols_q = [quote(c) for c in [*ev_cols, *ev_rest]]
    next_id = 1
    t_insert = t_agg = 0.0
    n_evals = n_ties = n_intervals = 0
    n_review = {"held": 0, "accepted": 0, "rejected": 0}
    batch_c, batch_e, summaries, results = [], [], [], []
    step = round(1 / rescored_share) if rescored_share > 0 else 0
    n_earlier = 0
    for si, sub in enumerate(subs):
        sequential = sub.sampling == "sequential"
        # re-scored after a harness bump: every candidate has an earlier-harness row too (kept,
        # listed, never folded: SubmissionSummary.earlier_versions)
        rescored = bool(step) and si % step == 0
        earlier_before = n_earlier
        skill = 0.05 + 0.45 * rng.random()
        samples = []
        tb = time.perf_counter()
        for w in workloads:
            base = 2e-4 * (1 + w.number % 9)
            seq = _sample_outcomes(rng, skill, n_samples, sequential)
            for idx, (outcome, speedup, ci) in enumerate(seq):
                code = f"# bench s{sub.pk} {w.wid} #{idx}\nimport jax\ndef workload(x):\n    return x * {idx}\n"
                sha = hashlib.sha256(code.encode()).hexdigest()
                tokens = 800 + (idx * 37) % 900
                batch_c.append(
                    (
                        next_id,
                        sub.pk,
                        w.pk,
                        idx,
                        idx // 8 if sequential else 0,
                        idx - 1 if sequential and idx else None,
                        f"{w.wid}_{idx}.py",
                        code,
                        sha,
                        "",
                        None,
                        tokens,
                        tokens // 4,
                        round(tokens * 2e-6, 6),
                    )
                )
                precheck = outcome == "compile_error" and idx % 2 == 0
                stage = Evaluation.PRECHECK if precheck else Evaluation.MAIN
                state = Evaluation.SKIPPED if precheck else Evaluation.DONE
                record = {
                    "jax_version": "0.10.2",
                    "harness_version": harness,
                    "hardware": HW,
                    "profile": "full",
                    "baseline_median_s": base,
                    "baseline_spread": 0.01,
                }
                if speedup is not None:
                    record["timing"] = {"method": "profiler", "median_s": base / speedup, "spread": 0.015}
                if ci:
                    record.update(speedup_ci=ci, baseline_source="interleaved")
                finished = now - datetime.timedelta(seconds=n_evals % 100000)
                review = None
                if stage == Evaluation.MAIN and speedup is not None:
                    outcome, speedup, ci, record, review = _review(
                        review_rng, outcome, speedup, ci, record, staff.pk, finished, si % HELD_EVERY == HELD_EVERY - 1
                    )
                    if review:
                        n_review[review[0]] += 1
                batch_e.append(
                    _evaluation_row(
                        next_id, hw.pk, stage, state, outcome, speedup, ci, record, sha, finished, w.version, review
                    )
                )
                if rescored:  # measured under the earlier harness too, before the re-score above
                    o, sp, _ = _sample_outcomes(rng, skill, 1, False, legacy_share=1.0)[0]
                    old = dict(record, harness_version=EARLIER_HARNESS, speedup_ci=None)
                    if sp is not None:
                        old["timing"] = {"method": "profiler", "median_s": base / sp, "spread": 0.015}
                    batch_e.append(
                        _evaluation_row(
                            next_id, hw.pk, Evaluation.MAIN, Evaluation.DONE, o, sp, None, old, sha, finished, w.version
                        )
                    )
                    n_earlier += 1
                # the same folding code as refresh_for_evaluation / rebuild_submission
                s = A.sample_from_evaluation(
                    w.pk, idx, stage, state, outcome, speedup, record, finished, review[0] if review else ""
                )
                if s is not None:  # a held row is not folded (nor is its candidate) until accepted
                    samples.append(s)
                next_id += 1
                n_evals += 1
                n_ties += outcome == "correct_tie"
                n_intervals += ci is not None
        ta = time.perf_counter()
        t_insert += ta - tb
        summary = SubmissionSummary(
            submission=sub,
            hardware=hw,
            source=SubmissionSummary.EVALUATED,
            mode="independent" if not sequential else "sequential",
            candidates_total=len(workloads) * n_samples,
            tokens_total=None,
            cost_total=None,
            earlier_versions=n_earlier - earlier_before,
            earlier_harness_versions=[EARLIER_HARNESS] if n_earlier > earlier_before else [],
        )
        states, acc = A.build(samples)
        rows = A.summary_from_states(summary, states, acc, wmap, sizes)
        summaries.append(summary)
        results.append(rows)
        t_agg += time.perf_counter() - ta
        if len(batch_c) >= 100_000 or si == len(subs) - 1:
            tb = time.perf_counter()
            with transaction.atomic():
                _insert(cand_table, cand_cols_q, [(*r, *cand_rest.values()) for r in batch_c])
                _insert(ev_table, ev_cols_q, [(*r, *ev_rest.values()) for r in batch_e])
                SubmissionSummary.objects.bulk_create(summaries)
                for summ, rows in zip(summaries, results):
                    for r in rows:
                        r.summary = summ
                WorkloadResult.objects.bulk_create([r for rows in results for r in rows], batch_size=2000)
            t_insert += time.perf_counter() - tb
            batch_c, batch_e, summaries, results = [], [], [], []
            print(
                f"    {si + 1}/{len(subs)} submissions, {n_evals} evaluations "
                f"(insert {t_insert:.0f}s, aggregates {t_agg:.0f}s)",
                flush=True,
            )
    # tokens / cost totals as refresh/rebuild compute them
    for sub in subs:
        SubmissionSummary.objects.filter(submission=sub).update(
            **{k: v for k, v in A._candidate_totals(sub.pk).items() if k != "candidates_total"}
        )
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{cand_table}', 'id'), %s)", [next_id])
            # what autovacuum does after bulk inserts: statistics, and the visibility map that
            # index-only scans (the counts) need
            cur.execute("VACUUM ANALYZE")
        else:
            cur.execute("ANALYZE")
    return {
        "candidates": next_id - 1,
        "evaluations": n_evals + n_earlier,
        "seconds_metadata": round(t_meta, 1),
        "seconds_insert": round(t_insert, 1),
        "seconds_aggregates": round(t_agg, 1),
        "ties": n_ties,
        "with_interval": n_intervals,
        "earlier_harness": n_earlier,
        "reviews": n_review,
        "submissions": [s.pk for s in subs],
        "workloads": [w.slug for w in workloads],
        "public": [s.pk for s in subs if s.published_at],
    }


def measure_refresh(n_samples, n=60, seed=2):
    """Time refresh_for_evaluation for newly finished evaluations of new samples (index K, K+1...)."""
    # deferred: runs in the child process only, after _django() has set Django up
    from django.utils import timezone

    from catalog.models import HardwareTarget, Workload
    from evaluator.models import Evaluation, current_harness_version
    from leaderboard.aggregates.refresh import refresh_for_evaluation
    from submissions.models import Candidate, Submission

    harness = current_harness_version()
    rng = random.Random(seed)
    hw = HardwareTarget.objects.get(slug=HW)
    subs = list(Submission.objects.filter(hardware=hw).values_list("pk", "sampling"))
    wls = list(Workload.objects.values_list("pk", flat=True))
    times = {"sequential": [], "independent": []}
    cpu = {"sequential": [], "independent": []}
    used: dict[tuple[int, int], int] = {}
    for i in range(n):
        sub_id, sampling = subs[rng.randrange(len(subs))]
        wl = wls[rng.randrange(len(wls))]
        idx = used[(sub_id, wl)] = used.get((sub_id, wl), n_samples - 1) + 1  # the next sample
        outcome, speedup, ci = rng.choice(
            [
                ("correct_faster", 2.0, [1.9, 2.1]),
                ("correct_tie", 1.02, [0.97, 1.07]),
                ("correct_slower", 0.8, [0.76, 0.84]),
                ("correct_faster", 1.3, None),
                ("compile_error", None, None),
            ]
        )
        c = Candidate.objects.create(
            submission_id=sub_id, workload_id=wl, index=idx, code=f"# new {i}\n", parent_index=idx - 1
        )
        ev = Evaluation.objects.create(
            candidate=c,
            hardware=hw,
            stage="main",
            state="done",
            outcome=outcome,
            speedup=speedup,
            speedup_lo=ci[0] if ci else None,
            speedup_hi=ci[1] if ci else None,
            code_sha256=c.code_sha256,
            finished_at=timezone.now(),
            record={
                "jax_version": "0.10.2",
                "harness_version": harness,  # a verdict finishing now: the current harness
                "baseline_median_s": 1e-3,
                "speedup_ci": ci,
                "timing": {"median_s": 1e-3 / (speedup or 1), "spread": 0.02},
            },
        )
        t, tc = time.perf_counter(), time.process_time()
        refresh_for_evaluation(ev)
        times[sampling].append(1000 * (time.perf_counter() - t))
        cpu[sampling].append(1000 * (time.process_time() - tc))
    out = {}
    times["all"] = times["sequential"] + times["independent"]
    cpu["all"] = cpu["sequential"] + cpu["independent"]
    for mode, ts in times.items():
        if ts:
            ts.sort()
            out[mode] = {
                "n": len(ts),
                "median_ms": round(statistics.median(ts), 2),
                "p95_ms": round(ts[min(len(ts) - 1, int(0.95 * len(ts)))], 2),
                "max_ms": round(ts[-1], 2),
                "cpu_median_ms": round(statistics.median(cpu[mode]), 2),
            }
    return out


def child(args):
    """``seed``: migrate and fill the database, time the refresh and the upload; ``describe``:
    migrate (a kept database gets the migrations added since), collect the static files and say
    what the HTTP rows need (endpoints_load.describe)."""
    _django()
    # deferred: Django is set up just above
    from django.core.management import call_command
    from django.db import connection

    print(f"  [{connection.vendor}] migrate", flush=True)
    call_command("migrate", verbosity=0, interactive=False)
    if args.child == "describe":
        call_command("collectstatic", verbosity=0, interactive=False)
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import endpoints_load  # deferred: a sibling script, on sys.path from the line above

        info = endpoints_load.describe(MEMBER, STAFF, HW)
        info["vendor"] = connection.vendor
        pathlib.Path(args.out).write_text(json.dumps(info))
        return
    print(
        f"  [{connection.vendor}] populate {args.submissions} x ({args.workloads} + {args.level2} level-2) x {args.samples}",
        flush=True,
    )
    info = populate(
        args.submissions, args.workloads, args.samples, rescored_share=args.rescored_share, n_level2=args.level2
    )
    print(f"  [{connection.vendor}] refresh_for_evaluation timing", flush=True)
    info["refresh"] = measure_refresh(args.samples)
    if not args.no_upload:
        # into the filled database (its indexes are full size), after the refresh timing
        print(f"  [{connection.vendor}] trace upload (benchmarks/trace_upload.py, 7,200 samples, 3 runs)", flush=True)
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import trace_upload  # deferred: a sibling script, on sys.path from the line above

        info["upload"] = trace_upload.upload_figure(repeat=3)
    pathlib.Path(args.out).write_text(json.dumps(info))


# --------------------------------------------------------------------------------------------
# Parent: HTTP measurement under gunicorn
# --------------------------------------------------------------------------------------------


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, timeout=60):
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as r:
        body = r.read()
        status = r.status
    return time.perf_counter() - t, status, len(body)


class Gunicorn:
    """The portal under gunicorn. Up once ``/health/`` answers; with ``fresh`` (one worker) once
    the worker has booted, before any request: its first request is a restart's."""

    def __init__(self, env, settings_module="portal.settings", workers=2, fresh=False):
        self.port = _free_port()
        self.env = dict(env, DJANGO_SETTINGS_MODULE=settings_module)
        self.log = tempfile.NamedTemporaryFile("w+", prefix="gunicorn-", suffix=".log", delete=False)
        flag = pathlib.Path(self.log.name + ".up")
        config = pathlib.Path(self.log.name + ".conf.py")
        config.write_text(endpoints_load.gunicorn_ready_hook(flag))
        self.proc = subprocess.Popen(
            [
                str(pathlib.Path(PY).with_name("gunicorn")),
                "portal.wsgi:application",
                "--config",
                str(config),
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--timeout",
                "120",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if fresh:
                    if flag.exists():
                        return
                    raise OSError("not booted yet")
                _get(self.base + "/health/", timeout=5)
                return
            except Exception:  # noqa: BLE001 - not up yet: try again until the deadline
                if self.proc.poll() is not None:
                    break
                time.sleep(0.3)
        self.stop()
        self.log.seek(0)
        raise RuntimeError("gunicorn did not start:\n" + self.log.read()[-3000:])

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def _latency(base, paths, n):
    """First request per worker (cold), then n sequential requests cycling over ``paths``."""
    cold = []
    for p in paths[:2]:
        t, status, _ = _get(base + p)
        assert status == 200, (p, status)
        cold.append(t)
    for p in paths:  # warm both workers on every path
        for _ in range(2):
            _get(base + p)
    ts = []
    for i in range(n):
        t, status, size = _get(base + paths[i % len(paths)])
        assert status == 200
        ts.append(t)
    ts.sort()
    return {
        "median_ms": round(1000 * statistics.median(ts), 1),
        "p95_ms": round(1000 * ts[min(len(ts) - 1, int(0.95 * len(ts)))], 1),
        "max_ms": round(1000 * ts[-1], 1),
        "cold_ms": round(1000 * max(cold), 1),
        "bytes": size,
    }


def _throughput(base, paths, seconds, clients):
    if seconds <= 0:
        return {"rps": float("nan"), "errors": 0}
    stop = time.monotonic() + seconds
    count = [0]
    errors = [0]
    lock = threading.Lock()

    def worker(k):
        i = k
        while time.monotonic() < stop:
            try:
                _, status, _ = _get(base + paths[i % len(paths)])
                ok = status == 200
            except Exception:  # noqa: BLE001 - any failed request counts as an error
                ok = False
            with lock:
                count[0] += ok
                errors[0] += not ok
            i += 1

    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as ex:
        list(ex.map(worker, range(clients)))
    return {"rps": round(count[0] / (time.monotonic() - t), 1), "errors": errors[0]}


def http_bench(env, info, n, seconds, clients, nocache_settings, args):
    subs = info["public"]
    rng = random.Random(3)
    pages = {
        "leaderboard": [
            "/leaderboard/?hardware=tpu-v6e",
            "/leaderboard/?hardware=tpu-v6e&set=production&n=10&sort=-fast",
        ],
        "submission": [f"/submissions/{s}/" for s in rng.sample(subs, min(4, len(subs)))],
        "workload": [f"/workloads/{w}/" for w in info["workloads"][:3]],
        "compare": [f"/compare/?s={a}&s={b}" for a, b in zip(subs[:4], subs[4:8])]
        or [f"/compare/?s={subs[0]}&s={subs[-1]}"],
        "api": ["/api/v1/leaderboard/?hardware=tpu-v6e&n=20", "/api/v1/leaderboard/?hardware=tpu-v6e&set=expert"],
        # a whole submission's counts (issue 34 item 8: once quadratic in its size on SQLite)
        "api-detail": [f"/api/v1/submissions/{s}/" for s in subs[:4]],
        "api-evals": [f"/api/v1/submissions/{s}/evaluations/" for s in subs[:4]],
    }
    if info.get("earlier_harness"):  # the version filter's view (leaderboard/board_versions.py)
        pages[ALL_VERSIONS] = ["/leaderboard/?hardware=tpu-v6e&versions=all"]
    out = {}
    rows = endpoints_load.plan(info, HW)
    endpoints = {
        "rows": [(r.label, r.role) for r in rows],
        "unmeasured": endpoints_load.unmeasured(info["inventory"], rows),
    }
    for variant, settings_module in (("cached", "portal.settings"), ("uncached", nocache_settings)):
        g = Gunicorn(env, settings_module)
        try:
            if args.endpoint_requests:
                print(f"  every page and endpoint, {variant}", flush=True)
                endpoints["warm" if variant == "cached" else "cold"] = endpoints_load.measure_all(
                    g.base,
                    rows,
                    info,
                    args.endpoint_requests,
                    args.endpoint_seconds,
                    variant[:4] if variant == "cached" else "cold",
                )
            res = {}
            for name, paths in pages.items():
                lat = _latency(g.base, paths, n if name not in INFO_PAGES else max(4, n // 10))
                lat.update(_throughput(g.base, paths, seconds, clients))
                res[name] = lat
                print(
                    f"    {variant:8s} {name:11s} median {lat['median_ms']:7.1f} ms  p95 {lat['p95_ms']:7.1f} ms  "
                    f"cold {lat['cold_ms']:7.1f} ms  {lat['rps']:6.1f} req/s",
                    flush=True,
                )
            out[variant] = res
        finally:
            g.stop()
    if args.restarts:
        print(f"  the first request of a fresh worker ({args.restarts} restarts per page)", flush=True)
        endpoints["fresh"] = endpoints_load.fresh_worker(
            lambda: Gunicorn(env, "portal.settings", workers=1, fresh=True), rows, info, args.restarts
        )
    return out, endpoints


def database_url(name: str, workdir: pathlib.Path) -> str:
    """The database to fill and measure: DATABASE_URL's when it names this backend, else a SQLite
    file in the work dir or PG_DB on the local PostgreSQL server."""
    url = _environment().get("DATABASE_URL") or ""
    if backend_of(url) == name and url:
        return url
    if name == "sqlite":
        return f"sqlite:///{workdir / 'sqlite' / 'bench.sqlite3'}"
    return f"postgres://postgres@127.0.0.1:5432/{PG_DB}"


def backend_of(url: str) -> str:
    return "postgres" if urlsplit(url).scheme in ("postgres", "postgresql", "pgsql") else "sqlite"


def _environment():
    sys.path.insert(0, str(ROOT))
    from jaxbench import environment  # deferred: the repository joins the path just above

    return environment


BENCH_MARK = "SELECT 1 FROM submissions_team WHERE slug = 'bench-team-0'"  # a database this benchmark filled


def database_state(url: str) -> str:
    """``missing`` (no database, or no file), ``empty`` (no tables), ``bench`` (filled by this
    benchmark) or ``other`` (anything else: never written to here)."""
    if backend_of(url) == "sqlite":
        import sqlite3  # deferred: only the SQLite runs need it

        path = pathlib.Path(url[len("sqlite:///") :])
        if not path.exists():
            return "missing"
        with sqlite3.connect(path) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                return "empty"
            return "bench" if "submissions_team" in tables and conn.execute(BENCH_MARK).fetchone() else "other"
    import psycopg  # deferred: only the PostgreSQL runs need it

    server, db = _pg_split(url)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db]).fetchone():
            return "missing"
    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT to_regclass('django_migrations')").fetchone()[0]:
            return "empty"
        if not conn.execute("SELECT to_regclass('submissions_team')").fetchone()[0]:
            return "other"
        return "bench" if conn.execute(BENCH_MARK).fetchone() else "other"


def _pg_split(url: str) -> tuple[str, str]:
    """(the server's URL without a database, the database's name)."""
    parts = urlsplit(url)
    return urlunsplit(("postgres", parts.netloc, "", "", "")), parts.path.strip("/")


def _pg_admin(url: str, sql: str) -> None:
    import psycopg  # deferred: only the PostgreSQL runs need it

    with psycopg.connect(f"{_pg_split(url)[0]}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def create_database(url: str, state: str) -> None:
    """An empty database at ``url`` (one this benchmark filled before is dropped first)."""
    if backend_of(url) == "sqlite":
        path = pathlib.Path(url[len("sqlite:///") :])
        for f in (path, pathlib.Path(f"{path}-wal"), pathlib.Path(f"{path}-shm")):
            f.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    db = _pg_split(url)[1]
    if state == "bench":
        _pg_admin(url, f'DROP DATABASE "{db}"')
    if state in ("bench", "missing"):
        _pg_admin(url, f'CREATE DATABASE "{db}"')


def drop_database(url: str) -> None:
    if backend_of(url) == "sqlite":
        create_database(url, "bench")  # removes the file and its journals
    else:
        _pg_admin(url, f'DROP DATABASE IF EXISTS "{_pg_split(url)[1]}"')


def database_bytes(url: str) -> int:
    if backend_of(url) == "sqlite":
        return pathlib.Path(url[len("sqlite:///") :]).stat().st_size
    import psycopg  # deferred: only the PostgreSQL runs need it

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]


def _run_child(mode: str, env: dict, out: pathlib.Path, args) -> dict:
    cmd = [PY, __file__, "--child", mode, "--out", str(out)]
    cmd += ["--submissions", str(args.submissions), "--workloads", str(args.workloads), "--samples", str(args.samples)]
    cmd += ["--level2", str(args.level2)]
    cmd += ["--rescored-share", str(args.rescored_share)] + (["--no-upload"] if args.no_upload else [])
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    return json.loads(out.read_text())


def run_backend(name, args, workdir):
    url = database_url(name, workdir)
    state = database_state(url)
    if state == "other":
        raise SystemExit(f"{url} holds a database this benchmark did not fill: name an empty or a new one")
    reuse = args.reuse and state == "bench"
    if not reuse:
        create_database(url, state)
    env = dict(os.environ)
    var = workdir / name
    var.mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "JAXBENCH_VAR_DIR": str(var),
            "JAXBENCH_ANON_RATE": "100000000/min",
            "JAXBENCH_TOKEN_RATE": "100000000/min",
            "PYTHONPATH": f"{workdir}:{ROOT}",
            "JAXBENCH_LOG_LEVEL": "WARNING",
            "DATABASE_URL": url,
        }
    )
    print(f"  [{name}] {url}: {'reused as it is' if reuse else 'filled here'}", flush=True)
    redis = None
    if not env.get("DRAMATIQ_BROKER_URL"):  # the broker the portal runs beside (/health/ asks it)
        from portal.embedded import start_redis  # deferred: the repository joins the path in _environment()

        redis = start_redis(var / "redis" / "redis.sock")
    try:
        info = {"reused": reuse}
        if not reuse:
            t = time.perf_counter()
            info.update(_run_child("seed", env, var / "populate.json", args))
            info["seconds_total_load"] = round(time.perf_counter() - t, 1)
        if args.fill_only:
            print(f"  [{name}] filled and kept: measure it with --reuse", flush=True)
            return None
        info.update(_run_child("describe", env, var / "describe.json", args))
        info.setdefault("evaluations", info["counts"]["evaluations"])
        info["db_bytes"] = database_bytes(url)
        print(
            f"  [{name}] {info['counts']['evaluations']:,} evaluations, {info['counts']['held']} held, "
            f"{info['counts']['reviewed']} reviewed (db {info['db_bytes'] / 1e9:.2f} GB); "
            f"refresh_for_evaluation {info.get('refresh', '(not timed: a reused database)')}",
            flush=True,
        )
        info["http"], info["endpoints"] = http_bench(
            env, info, args.requests, args.seconds, args.clients, "lb_nocache_settings", args
        )
        return info
    finally:
        if redis is not None:
            redis.terminate()
            redis.wait(10)
        if not (args.keep or args.fill_only or reuse):
            drop_database(url)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--db",
        choices=["sqlite", "postgres", "both"],
        help="default: the backend DATABASE_URL names (SQLite when it is unset)",
    )
    ap.add_argument("--submissions", type=int, default=200)
    ap.add_argument("--workloads", type=int, default=50)
    ap.add_argument(
        "--level2", type=int, default=5, help="level-2 twins (Pallas baselines) beside the level-1 workloads"
    )
    ap.add_argument("--samples", type=int, default=144)
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply the number of submissions (0.1: a 144,000-evaluation run to iterate with; the "
        "targets are for the full size)",
    )
    ap.add_argument(
        "--no-upload", action="store_true", help="skip the trace upload figure (benchmarks/trace_upload.py)"
    )
    ap.add_argument(
        "--rescored-share",
        type=float,
        default=0.0,
        help="give this share of the submissions a second, earlier-harness row per candidate (as after a "
        "harness bump and a re-score: kept, listed, never folded) and measure the board's ?versions=all "
        "view too (apart from the targets); 0.05: 10 of 200 submissions, 72,000 more rows",
    )
    ap.add_argument("--requests", type=int, default=100, help="sequential requests per page type")
    ap.add_argument("--seconds", type=float, default=10.0, help="throughput window per page type (0: none)")
    ap.add_argument("--clients", type=int, default=4, help="concurrent clients for the throughput window")
    ap.add_argument(
        "--endpoint-requests",
        type=int,
        default=30,
        help="sequential requests per row of every page and endpoint (0: none)",
    )
    ap.add_argument("--endpoint-seconds", type=float, default=20.0, help="at most this long per row and cache variant")
    ap.add_argument("--restarts", type=int, default=5, help="fresh workers per page for the first-request figure")
    ap.add_argument("--keep", action="store_true", help="keep the databases and files")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="measure a database this benchmark filled and kept (--keep) as it is, without filling it again",
    )
    ap.add_argument(
        "--pipeline",
        type=int,
        default=0,
        metavar="N",
        help="also run benchmarks/pipeline_throughput.py with N candidates per database (embedded for "
        "sqlite, PostgreSQL + Redis for postgres; 2 worker threads) and put its overhead in "
        "the table (200 is the issue's figure: about 15 minutes per database)",
    )
    ap.add_argument("--fill-only", action="store_true", help="fill the database and keep it; measure nothing")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", choices=["seed", "describe"], help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    args.submissions = max(8, round(args.submissions * args.scale))
    if args.db is None:
        args.db = backend_of(_environment().get("DATABASE_URL") or "")
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="lb-bench-"))
    (workdir / "lb_nocache_settings.py").write_text(
        "from portal.settings import *  # noqa: F401,F403\n"
        "CACHES = {'default': {'BACKEND': 'django.core.cache.backends.dummy.DummyCache'}}\n"
    )
    print(
        f"leaderboard load benchmark: {args.submissions} submissions x {args.workloads} workloads x "
        f"{args.samples} samples = {args.submissions * args.workloads * args.samples} evaluations; "
        f"gunicorn 2 workers; {os.cpu_count()} CPUs; work dir {workdir}",
        flush=True,
    )
    results = {}
    try:
        for name in ["sqlite", "postgres"] if args.db == "both" else [args.db]:
            print(f"== {name} ==", flush=True)
            results[name] = run_backend(name, args, workdir)
            if results[name] is None:  # --fill-only
                del results[name]
                continue
            if args.pipeline:
                results[name]["pipeline"] = pipeline_figure(name, args.pipeline, workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if not results:
        return
    print(f"\n== summary (ms; req/s with {args.clients} concurrent clients) ==")
    print(f"{'db':9s} {'cache':9s} {'page':12s} {'median':>8s} {'p95':>8s} {'cold':>8s} {'req/s':>8s}")
    for db, info in results.items():
        for variant, pages in info["http"].items():
            for page, r in pages.items():
                flag = "" if r["p95_ms"] < 100 else "  (p95 over 100 ms)"
                print(
                    f"{db:9s} {variant:9s} {page:12s} {r['median_ms']:8.1f} {r['p95_ms']:8.1f} "
                    f"{r['cold_ms']:8.1f} {r['rps']:8.1f}{flag}"
                )
        for mode, r in info.get("refresh", {}).items():
            print(
                f"{db:9s} refresh_for_evaluation ({mode}): median {r['median_ms']} ms, p95 {r['p95_ms']} ms, "
                f"max {r['max_ms']} ms (CPU median {r['cpu_median_ms']} ms) over {r['n']}"
            )
        if not info["reused"]:
            print(
                f"{db:9s} load: {info['evaluations']} evaluations ({info.get('with_interval', 0)} timed side by side "
                f"with an interval, {info.get('ties', 0)} ties, reviews {info.get('reviews')}), insert "
                f"{info['seconds_insert']}s, aggregates {info['seconds_aggregates']}s, database "
                f"{info['db_bytes'] / 1e9:.2f} GB"
            )
    print_targets(results, args)
    endpoints_load.print_table(results)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


def pipeline_figure(db: str, count: int, workdir: pathlib.Path) -> dict:
    """benchmarks/pipeline_throughput.py's figures, for this database's production pairing."""
    variant = "embedded" if db == "sqlite" else "postgres-redis"
    print(
        f"  [{db}] pipeline over the harness back to back ({count} candidates, {variant}, 2 worker threads)", flush=True
    )
    out_json = workdir / f"pipeline-{db}.json"
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "pipeline_throughput.py"),
            "--count",
            str(count),
            "--threads",
            "2",
            "--db",
            variant,
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    for line in [line for line in out.stdout.splitlines() if line.strip()][-8:]:
        print("    " + line.split("\r")[-1], flush=True)
    if out.returncode or not out_json.exists():
        return {"count": count, "variant": variant, "overhead_pct": None, "error": (out.stderr or "")[-500:]}
    return json.loads(out_json.read_text())


def print_targets(results: dict, args) -> None:
    """ONE table: every figure of issue 13 beside its target, for each database."""
    dbs = list(results)
    rows = []  # (figure, target, {db: (value, ok)})
    first = next(iter(results.values()), {})
    up = {db: info.get("upload") or {} for db, info in results.items()}
    if any(up.values()):
        rows.append(
            (
                "trace upload, 7,200 samples (~28 MB), median",
                "< 2.0 s",
                {db: (f"{u['median_s']:.2f} s", u["median_s"] < 2.0) if u else ("-", None) for db, u in up.items()},
            )
        )
    for page in [p for p in first.get("http", {}).get("uncached", {}) if p not in INFO_PAGES]:
        rows.append(
            (
                f"{page} page, cold (no cache), p95",
                "< 100 ms",
                {
                    db: (
                        f"{info['http']['uncached'][page]['p95_ms']:.1f} ms",
                        info["http"]["uncached"][page]["p95_ms"] < 100,
                    )
                    for db, info in results.items()
                },
            )
        )
    for page in [p for p in first.get("http", {}).get("cached", {}) if p not in INFO_PAGES]:
        rows.append(
            (
                f"{page} page, cached, p95",
                "< 100 ms",
                {
                    db: (
                        f"{info['http']['cached'][page]['p95_ms']:.1f} ms",
                        info["http"]["cached"][page]["p95_ms"] < 100,
                    )
                    for db, info in results.items()
                },
            )
        )
    rows.append(
        (
            "aggregate refresh after one evaluation, p95",
            "< 20 ms (PostgreSQL)",
            {
                db: (f"{info['refresh']['all']['p95_ms']:.1f} ms", info["refresh"]["all"]["p95_ms"] < 20)
                if info.get("refresh")
                else ("reused db", None)
                for db, info in results.items()
            },
        )
    )
    pipe = {db: info.get("pipeline") for db, info in results.items()}
    rows.append(
        (
            f"pipeline over the harness back to back, {args.pipeline or 200} candidates",
            "< 10%",
            {
                db: (
                    (f"{p['overhead_pct']:+.1f}%", p["overhead_pct"] < 10)
                    if p and p.get("overhead_pct") is not None
                    else ("failed" if p else "--pipeline N", False if p else None)
                )
                for db, p in pipe.items()
            },
        )
    )
    n_ev = {db: info["evaluations"] for db, info in results.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\n== issue 13 targets: {args.submissions} submissions x {args.workloads} workloads x {args.samples} "
        f"samples ({', '.join(f'{db} {n:,}' for db, n in n_ev.items())} evaluations); "
        f"{os.cpu_count()} CPUs, load now {load:.1f} =="
    )
    w = max(len(r[0]) for r in rows)
    print(f"{'figure':{w}s}  {'target':>21s}" + "".join(f"  {db:>16s}" for db in dbs))
    for figure, target, vals in rows:
        cells = ""
        for db in dbs:
            v, ok = vals.get(db, ("-", None))
            cells += f"  {v + ('' if ok is None else ' ok' if ok else ' MISS'):>16s}"
        print(f"{figure:{w}s}  {target:>21s}{cells}")
    for db, info in results.items():
        for variant, pages in info["http"].items():
            for page in INFO_PAGES & set(pages):
                r = pages[page]
                print(
                    f"{db:9s} {variant:9s} {page} (not a target: an explicit look back, {info['earlier_harness']:,} "
                    f"earlier-harness rows): median {r['median_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms, "
                    f"cold {r['cold_ms']:.1f} ms, {r['rps']:.1f} req/s"
                )


if __name__ == "__main__":
    main()
