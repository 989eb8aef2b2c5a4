"""Issue 23, item 1: a fair, visible queue.

User submissions never wait behind demo or maintenance work (the background lane), identical
code already judged is resolved at intake, and a submission's position, what runs now and an
estimate from measured durations are computed with a bounded number of queries, also for a
7,200-sample trace queued behind other work."""

import datetime
import threading
import time

import dramatiq
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from dramatiq.brokers.stub import StubBroker

from evaluator import actors, pipeline, queue_status, runner
from evaluator.models import Evaluation, WorkerHeartbeat, WorkloadDuration
from evaluator.queues import BACKGROUND_LANE, BACKGROUND_PRIORITY, USER_LANE, with_background
from evaluator.worker_middleware import queues_for
from leaderboard.models import SubmissionSummary
from submissions.bulk import insert_rows
from submissions.models import Candidate, Submission
from tests import factories

pytestmark = pytest.mark.django_db

CODE = "def workload(x, scale):\n    return x\n"


@pytest.fixture
def sent(monkeypatch):
    return factories.capture_enqueues(monkeypatch)


# -- lanes ---------------------------------------------------------------------------------


def test_user_work_goes_to_the_hardware_queue_and_demo_work_to_its_background_twin(
    sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        user_sub = factories.submission([("12p", CODE)])
        user_ids = pipeline.schedule_submission(user_sub)
        demo_sub = factories.submission([("12p", CODE + "# demo\n")])
        demo_ids = pipeline.schedule_submission(demo_sub, lane=BACKGROUND_LANE)
    assert sent == [(user_ids, "eval.cpu"), (demo_ids, "background.eval.cpu")]
    assert Evaluation.objects.get(pk=user_ids[0]).lane == USER_LANE
    assert Evaluation.objects.get(pk=demo_ids[0]).lane == BACKGROUND_LANE
    # the messages name the low-priority actor in the background lane
    assert pipeline.actor_for("eval.cpu") == "evaluate"
    assert pipeline.actor_for("background.eval.cpu") == "evaluate_background"
    assert dramatiq.get_broker().get_actor("evaluate_background").priority == BACKGROUND_PRIORITY
    assert actors.evaluate.priority == 0 < actors.evaluate_background.priority
    assert actors.sweep_expert.priority == BACKGROUND_PRIORITY


def test_a_passed_precheck_sends_its_main_stage_to_the_same_lane(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        sub = factories.submission([("12p", CODE)], hw="tpu-v6e")
        (pre_id,) = pipeline.schedule_submission(sub, lane=BACKGROUND_LANE)
    assert sent == [([pre_id], "background.precheck")]
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        factories.judge(pre_id, factories.judged_record(numerics_prechecked=True))
    main = Evaluation.objects.get(candidate__submission=sub, stage=Evaluation.MAIN)
    assert main.lane == BACKGROUND_LANE and sent == [([main.pk], "background.eval.tpu-v6e")]


def test_the_demo_and_the_expert_sweeps_use_the_background_lane(monkeypatch, django_capture_on_commit_callbacks):
    from jaxbench.kernels import examples
    from portal import demo

    platform = factories.hardware("cpu").platform
    for wid in examples.for_platform(platform):
        factories.workload(wid)
    sent = []
    monkeypatch.setattr(pipeline, "enqueue_many", lambda ids, queue: sent.append((len(ids), queue)))
    monkeypatch.setattr(pipeline, "BACKGROUND_ENQUEUE_OVER", 10_000)  # send on this thread
    with django_capture_on_commit_callbacks(execute=True):
        subs = demo.create_demo("cpu")
    assert {q for _, q in sent} == {"background.eval.cpu"}
    assert set(Evaluation.objects.filter(candidate__submission__in=subs).values_list("lane", flat=True)) == {
        BACKGROUND_LANE
    }

    class Recorder:
        def __init__(self):
            self.messages = []

        def declare_queue(self, q):
            pass

        def enqueue(self, message):
            self.messages.append(message)

    rec = Recorder()
    monkeypatch.setattr(dramatiq, "get_broker", lambda: rec)
    actors.send_expert_sweeps("cpu", ["1p", "2p"])
    assert [m.queue_name for m in rec.messages] == ["background.eval.cpu"] * 2


def test_a_worker_consumes_both_lanes_of_its_queues():
    assert queues_for("cpu") == {
        "eval.cpu",
        "background.eval.cpu",
        "precheck",
        "background.precheck",
        "maintenance",
    }
    assert queues_for("tpu-v6e") == {"eval.tpu-v6e", "background.eval.tpu-v6e"}
    assert with_background(["eval.cpu", "maintenance"]) == {"eval.cpu", "background.eval.cpu", "maintenance"}


def test_a_dramatiq_worker_runs_fetched_user_messages_before_background_ones():
    """The mechanism itself, on Dramatiq's own worker (one thread, as `make run` starts it):
    background messages queued first, then user ones; every user message runs before every
    background message the worker has not started yet. Each message takes a moment, as an
    evaluation does (seconds): meanwhile the user queue's consumer fetches the next one."""
    broker = StubBroker()
    order, gate = [], threading.Event()

    @dramatiq.actor(broker=broker, queue_name="eval.cpu", actor_name="user_work")
    def user_work(i):
        time.sleep(0.2)
        order.append(("user", i))

    @dramatiq.actor(broker=broker, queue_name="eval.cpu", actor_name="background_work", priority=BACKGROUND_PRIORITY)
    def background_work(i):
        if i == 0:
            gate.wait(10)  # the one already running when the user's work arrives
        time.sleep(0.2)
        order.append(("background", i))

    broker.declare_queue("background.eval.cpu")
    worker = dramatiq.Worker(broker, worker_threads=1, worker_timeout=50)
    worker.start()
    try:
        for i in range(4):
            broker.enqueue(background_work.message(i).copy(queue_name="background.eval.cpu"))
        time.sleep(0.5)  # the worker holds background 0 and has fetched the others
        for i in range(5):
            broker.enqueue(user_work.message(i))
        time.sleep(0.5)  # fetched too
        gate.set()
        broker.join("eval.cpu", timeout=10_000)
        broker.join("background.eval.cpu", timeout=10_000)
        worker.join()
    finally:
        worker.stop()
    assert order[0] == ("background", 0)  # running work is never interrupted
    assert [kind for kind, _ in order[1:6]] == ["user"] * 5, order
    assert sorted(order[6:]) == [("background", 1), ("background", 2), ("background", 3)]


# -- reuse at intake -------------------------------------------------------------------------


def test_identical_code_already_judged_is_resolved_at_intake(sent, django_capture_on_commit_callbacks):
    first = factories.submission([("12p", CODE)])
    (first_id,) = pipeline.schedule_submission(first)
    factories.judge(first_id, factories.judged_record())
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        again = factories.submission([("12p", CODE), ("12p", CODE + "# new\n")], team=first.team)
        waiting = pipeline.schedule_submission(again)
    reused = Evaluation.objects.get(candidate__submission=again, candidate__index=0)
    fresh = Evaluation.objects.get(candidate__submission=again, candidate__index=1)
    assert reused.state == Evaluation.DONE and reused.reused_from_id == first_id
    assert reused.record["reused"] is True and reused.outcome == "correct_slower" and reused.speedup == 0.8
    assert (reused.speedup_lo, reused.speedup_hi) == pytest.approx((0.72, 0.88))
    # only the new code waits for a worker
    assert waiting == [fresh.pk] and sent == [([fresh.pk], "eval.cpu")]
    # folded into the aggregates in the same transaction, like a worker's verdict
    summary = SubmissionSummary.objects.get(submission=again, source=SubmissionSummary.EVALUATED)
    assert summary.n_samples == 1 and summary.counts["correct_slower"] == 1


def test_no_reuse_across_jax_versions_profiles_or_infrastructure_deaths(sent):
    first = factories.submission([("12p", CODE), ("12p", CODE + "#b\n"), ("12p", CODE + "#c\n")])
    a, b, c = pipeline.schedule_submission(first)
    factories.judge(a, factories.judged_record(jax_version="0.0.1"))  # another JAX
    factories.judge(b, factories.judged_record(profile="full"))  # another size profile
    factories.judge(c, factories.judged_record(infrastructure_attempts=[{"attempt": 1}]))  # reached through deaths
    again = factories.submission([("12p", CODE), ("12p", CODE + "#b\n"), ("12p", CODE + "#c\n")], team=first.team)
    waiting = pipeline.schedule_submission(again)
    assert len(waiting) == 3
    assert not Evaluation.objects.filter(candidate__submission=again).exclude(state=Evaluation.QUEUED).exists()


def test_a_reused_precheck_that_passed_reuses_the_main_stage_too(sent, django_capture_on_commit_callbacks):
    first = factories.submission([("12p", CODE)], hw="tpu-v6e")
    (pre,) = pipeline.schedule_submission(first)
    factories.judge(pre, factories.judged_record(numerics_prechecked=True))
    main = Evaluation.objects.get(candidate__submission=first, stage=Evaluation.MAIN)
    factories.judge(main.pk, factories.judged_record(outcome="correct_faster", speedup=1.5, profile="full"))
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        again = factories.submission([("12p", CODE)], hw="tpu-v6e", team=first.team)
        assert pipeline.schedule_submission(again) == []
    rows = {e.stage: e for e in Evaluation.objects.filter(candidate__submission=again)}
    assert rows["precheck"].reused_from_id == pre and rows["main"].reused_from_id == main.pk
    assert rows["main"].outcome == "correct_faster" and sent == []


def test_a_stopped_precheck_is_reused_as_the_candidates_verdict(sent):
    first = factories.submission([("12p", CODE)], hw="tpu-v6e")
    (pre,) = pipeline.schedule_submission(first)
    factories.judge(pre, factories.judged_record(outcome="incorrect", speedup=None), state=Evaluation.SKIPPED)
    again = factories.submission([("12p", CODE)], hw="tpu-v6e", team=first.team)
    assert pipeline.schedule_submission(again) == []
    (row,) = Evaluation.objects.filter(candidate__submission=again)
    assert (row.stage, row.state, row.outcome, row.reused_from_id) == ("precheck", "skipped", "incorrect", pre)


def test_a_measured_verdict_records_its_duration_and_a_reused_one_does_not(sent):
    sub = factories.submission([("12p", CODE), ("12p", CODE)])
    a, b = pipeline.schedule_submission(sub)
    Evaluation.objects.filter(pk=a).update()  # queued
    ev = runner.claim(a, "w1")
    Evaluation.objects.filter(pk=a).update(started_at=timezone.now() - datetime.timedelta(seconds=42))
    ev.refresh_from_db()
    runner.finish(ev, factories.judged_record(), Evaluation.DONE)
    row = WorkloadDuration.objects.get(workload__wid="12p", stage="main")
    assert len(row.recent) == 1 and 41 <= row.recent[0] <= 60
    assert runner.run_evaluation(b) == "reused"  # the worker's check still catches twins of one upload
    row.refresh_from_db()
    assert len(row.recent) == 1


# -- position, what runs now, estimate -------------------------------------------------------


def _queued_trace(team, n, wids, lane=USER_LANE, hw="cpu"):
    """A trace submission with ``n`` queued rows over ``wids``, inserted directly."""
    hardware = factories.hardware(hw)
    sub = Submission.objects.create(team=team, hardware=hardware, kind=Submission.TRACE, method="agent")
    pks = {w: factories.workload(w).pk for w in wids}
    per = {}
    rows = []
    for i in range(n):
        w = wids[i % len(wids)]
        idx = per.get(w, 0)
        per[w] = idx + 1
        rows.append((sub.pk, pks[w], idx, f"# {sub.pk}-{i}\n", f"{sub.pk:08d}{i:056d}"))
    insert_rows(Candidate, ("submission_id", "workload_id", "index", "code", "code_sha256"), rows)
    now = timezone.now()
    insert_rows(
        Evaluation,
        ("candidate_id", "hardware_id", "stage", "lane", "code_sha256", "enqueued_at"),
        (
            (cid, hardware.pk, Evaluation.MAIN, lane, sha, now)
            for cid, sha in Candidate.objects.filter(submission=sub).order_by("pk").values_list("pk", "code_sha256")
        ),
    )
    return sub


def _live_worker(pid, now, **fields):
    """A cpu worker's heartbeat, ``host:<pid>``, seen ``now``, consuming the cpu queues."""
    return WorkerHeartbeat.objects.create(
        name=f"host:{pid}",
        hostname="host",
        pid=pid,
        hardware="cpu",
        queues=sorted(queues_for("cpu")),
        started_at=now,
        last_seen_at=now,
        **fields,
    )


def test_a_7200_sample_trace_behind_other_work_gets_its_position_and_estimate_in_a_few_queries():
    _, team = factories.member()
    cpu = factories.hardware("cpu")
    wids = ["12p", "8p", "41k"]
    for w in wids:
        factories.workload(w)
    demo = _queued_trace(team, 500, wids, lane=BACKGROUND_LANE)  # queued first, but background
    other = _queued_trace(team, 300, ["12p", "8p"])  # a user's work queued before ours
    trace = _queued_trace(team, 7200, wids)
    # measured durations: 12p 2 s, 8p 4 s (median of odd lists), 41k never measured (default)
    WorkloadDuration.objects.create(hardware=cpu, workload=factories.workload("12p"), stage="main", recent=[1, 2, 9])
    WorkloadDuration.objects.create(hardware=cpu, workload=factories.workload("8p"), stage="main", recent=[4, 3, 5])
    # one row of the other submission runs now, for 1 s of its 2 s median
    running = Evaluation.objects.filter(candidate__submission=other, candidate__workload__wid="12p").first()
    now = timezone.now()
    Evaluation.objects.filter(pk=running.pk).update(
        state=Evaluation.RUNNING, started_at=now - datetime.timedelta(seconds=1), worker="host:1:7"
    )
    for i in range(2):
        _live_worker(i + 1, now)

    t0 = time.perf_counter()
    with CaptureQueriesContext(connection) as ctx:
        q = queue_status.submission_queue(trace, now=now)
    elapsed = time.perf_counter() - t0
    assert len(ctx.captured_queries) <= 8, [c["sql"][:120] for c in ctx.captured_queries]
    assert elapsed < 2.0, elapsed

    assert q["queue"] == "eval.cpu" and q["lane"] == USER_LANE
    assert q["position"] == 299  # the other user's 300 rows, one of which runs now; demo rows are not ahead
    assert q["queued"] == 7200 and q["workers"] == 2
    # ahead: 149 x 12p (2 s) + 150 x 8p (4 s); running: 1 s left; two workers
    assert q["start_in_s"] == pytest.approx((149 * 2 + 150 * 4 + 1) / 2, abs=0.1)
    # ours: 2400 each of 12p, 8p and 41k (41k at the 60 s default)
    assert q["finish_in_s"] == pytest.approx(q["start_in_s"] + (2400 * 2 + 2400 * 4 + 2400 * 60) / 2, abs=0.1)
    assert q["estimated_with_default"] == 2400
    assert q["running"] == [
        {
            "workload": "12p",
            "stage": "main",
            "lane": "user",
            "elapsed_s": 1.0,
            "left_s": 1.0,
            "worker": "host:1:7",
            "mine": False,
            "text": q["running"][0]["text"],
        }
    ]
    assert "299 row(s) ahead of yours on eval.cpu" in q["text"]

    # the background submission waits behind every queued user row
    b = queue_status.submission_queue(demo, now=now)
    assert b["queue"] == "background.eval.cpu" and b["position"] == 299 + 7200


def test_past_the_costed_head_the_position_is_counted_and_the_rest_costed_at_its_mean(monkeypatch):
    """A long queue's workloads are read for its first AHEAD_COSTED rows only (each row read
    joins its candidate: 14,400 rows ahead took 60-80 ms on PostgreSQL); the position stays
    exact, and each row past the head costs the head's mean."""
    monkeypatch.setattr(queue_status, "AHEAD_COSTED", 10)
    _, team = factories.member()
    cpu = factories.hardware("cpu")
    factories.workload("12p")
    factories.workload("8p")
    _queued_trace(team, 10, ["12p"])  # the head: 10 x 12p at 2 s
    _queued_trace(team, 30, ["8p"])  # past it: 8p (4 s), costed at the head's mean
    trace = _queued_trace(team, 5, ["12p"])
    WorkloadDuration.objects.create(hardware=cpu, workload=factories.workload("12p"), stage="main", recent=[2])
    WorkloadDuration.objects.create(hardware=cpu, workload=factories.workload("8p"), stage="main", recent=[4])
    now = timezone.now()
    _live_worker(1, now)
    with CaptureQueriesContext(connection) as ctx:
        q = queue_status.submission_queue(trace, now=now)
    assert len(ctx.captured_queries) <= 8, [c["sql"][:120] for c in ctx.captured_queries]
    assert q["position"] == 40 and q["costed"] == 10 and q["queued"] == 5
    assert q["start_in_s"] == pytest.approx(40 * 2.0)  # the head's mean (2 s) for all 40
    assert q["finish_in_s"] == pytest.approx(40 * 2.0 + 5 * 2.0)
    assert "the first 10 rows ahead costed by workload, the other 30 at their mean" in q["text"]
    # within the head: every row costed by its workload, as before
    monkeypatch.setattr(queue_status, "AHEAD_COSTED", 100)
    q = queue_status.submission_queue(trace, now=now)
    assert q["position"] == q["costed"] == 40 and q["start_in_s"] == pytest.approx(10 * 2 + 30 * 4)
    assert "costed by workload" not in q["text"]


def test_the_rows_ahead_are_read_with_the_queue_outside_the_or_of_the_lanes():
    """The queue's state and stage are top-level terms of the rows-ahead query, never repeated
    inside the OR of the lanes: SQLite (with ANALYZE's statistics) searches the (state,
    hardware, stage) index only then, and scanned all 1.46 M rows of the load benchmark
    otherwise (720 ms for a test run's page; issue 34, item 8)."""
    _, team = factories.member()
    factories.workload("12p")
    _queued_trace(team, 4, ["12p"])
    demo = _queued_trace(team, 3, ["12p"], lane=BACKGROUND_LANE)
    with CaptureQueriesContext(connection) as ctx:
        b = queue_status.submission_queue(demo)
    assert b["position"] == 4 and b["queued"] == 3
    ahead = [c["sql"] for c in ctx.captured_queries if " OR " in c["sql"] and '"lane"' in c["sql"]]
    assert len(ahead) == 1, [c["sql"][:160] for c in ctx.captured_queries]
    # the head of the rows ahead is read in a subquery (U0), the grouping joins it
    where = ahead[0].split(" WHERE ", 2)[2].split(" ORDER BY ")[0]
    for column in ('"state"', '"stage"', '"hardware_id"'):
        assert where.count(f"U0.{column}") == 1, (column, where)
    if connection.vendor == "sqlite":
        with connection.cursor() as cur:
            cur.execute("EXPLAIN QUERY PLAN " + ahead[0])
            plan = " | ".join(str(row[-1]) for row in cur.fetchall())
        assert "evaluation_queue_idx" in plan and "SCAN U0" not in plan, plan


def test_the_status_api_and_the_page_show_the_queue(client):
    user, team = factories.member()
    factories.workload("12p")
    sub = _queued_trace(team, 3, ["12p"])
    client.force_login(user)
    st = client.get(f"/api/v1/submissions/{sub.pk}/status/").json()
    assert st["queue"]["position"] == 0 and st["queue"]["queued"] == 3 and st["queue"]["start_in_s"] is None
    assert "no live worker" in st["queue"]["text"]
    page = client.get(f"/submissions/{sub.pk}/").content.decode()
    assert 'id="progress-queue"' in page and "0 row(s) ahead of yours on eval.cpu" in page
    assert client.get(f"/submissions/{sub.pk}/progress.json").json()["queue"]["queued"] == 3


def test_health_shows_what_each_worker_runs_now(client):
    from evaluator.health import status

    _, team = factories.member()
    factories.workload("12p")
    sub = _queued_trace(team, 2, ["12p"])
    now = timezone.now()
    ev = Evaluation.objects.filter(candidate__submission=sub).first()
    Evaluation.objects.filter(pk=ev.pk).update(
        state=Evaluation.RUNNING, worker="host:9:140", started_at=now - datetime.timedelta(seconds=5)
    )
    _live_worker(
        9,
        now,
        tasks=[{"actor": "sweep_expert", "args": ["1p", "cpu"], "queue": "background.eval.cpu", "started_at": "x"}],
    )
    (w,) = status()["workers"]
    assert [r["evaluation"] for r in w["running"]] == [ev.pk] and w["running"][0]["workload"] == "12p"
    assert w["other_tasks"][0]["actor"] == "sweep_expert"
    q = {x["name"]: x for x in status()["queues"]}
    assert q["eval.cpu"]["running"] == 1 and q["eval.cpu"]["queued"] == 1 and "background.eval.cpu" in q
    html = client.get("/health/").content.decode()
    assert "sample 0" in html and "sweep_expert(1p, cpu)" in html


def test_the_docs_state_the_queue_rules_the_code_applies(client):
    html = client.get("/docs/").content.decode()
    assert 'id="queue"' in html and 'id="selection"' in html
    assert f"or {queue_status.DEFAULT_SECONDS['main']:.0f} s (main stage)" in html
    assert f"/ {queue_status.DEFAULT_SECONDS['precheck']:.0f} s (pre-check)" in html
    assert f"the last {WorkloadDuration.KEEP} measured evaluations" in html
    assert f"Past the first {queue_status.AHEAD_COSTED:,} rows ahead" in html
    design = (__import__("pathlib").Path(__file__).parents[2] / "docs" / "DESIGN.md").read_text()
    assert f"first {queue_status.AHEAD_COSTED:,} rows ahead (`AHEAD_COSTED`)" in design.replace("\n  ", " ")
    assert f"the last {WorkloadDuration.KEEP} measured durations" in design and "60 s main / 20 s pre-check" in design
