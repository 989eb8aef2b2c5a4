"""Where a submission stands in its queue: rows ahead, what runs now, and when it should start
and finish, from measured durations. For the submission page, the status API and the CLI.

* Position: the queued rows of the same queue (hardware target, stage, lane) created before the
  submission's first queued row; in the background lane every queued user row of the queue is
  ahead too (users go first, evaluator/queues.py).
* Estimate: each row ahead (of the first ``AHEAD_COSTED``; past them, each at their mean) and
  each of the submission's own queued rows costs the median of the
  last ``WorkloadDuration.KEEP`` measured evaluations of its workload on that hardware and stage
  (claim to verdict, reused verdicts excluded), or ``DEFAULT_SECONDS`` for a workload never
  measured there; a running row costs what its median has left. The sum is divided by the live
  workers consuming the queue (each holds one device at a time). No live worker: no estimate.

Every figure comes from a fixed number of grouped queries (six, seven past ``AHEAD_COSTED``
rows ahead), whatever the queue's length.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from django.db.models import Count, Min, Q
from django.utils import timezone

from evaluator.health import live_heartbeats
from evaluator.models import Evaluation, WorkloadDuration
from evaluator.queues import BACKGROUND_LANE, USER_LANE, stage_queue

# The estimate of one evaluation of a workload never measured on that hardware and stage: the
# main stage (a compile, the checks, 5 warm-up and 50 timed calls of the candidate and of the
# baseline, interleaved, in a fresh child) and the CPU pre-check (a lowering and an interpret-mode
# check at the small sizes).
DEFAULT_SECONDS = {Evaluation.MAIN: 60.0, Evaluation.PRECHECK: 20.0}
RUNNING_SHOWN = 10  # rows listed under "runs now"
RUNNING_COUNTED = 200  # running rows whose remaining time counts (more than any real fleet)
# rows ahead whose workloads are read for the estimate; past them each row costs their mean
AHEAD_COSTED = 2000


def _of_queue(stage: str, hardware_id: int) -> Q:
    """The queued rows of a stage's queue, either lane (the pre-check's queue is every target's)."""
    q = Q(state=Evaluation.QUEUED, stage=stage)
    return q if stage == Evaluation.PRECHECK else q & Q(hardware_id=hardware_id)


def median_seconds(stage: str, hardware_id: int | None = None) -> dict[tuple[int, int], float]:
    """{(hardware id, workload id): median measured seconds} at ``stage`` (one query)."""
    qs = WorkloadDuration.objects.filter(stage=stage)
    if hardware_id is not None:
        qs = qs.filter(hardware_id=hardware_id)
    return {(h, w): statistics.median(r) for h, w, r in qs.values_list("hardware_id", "workload_id", "recent") if r}


def _cost(counts, medians, default: float) -> tuple[float, int]:
    """(seconds, rows estimated with the default) of ``counts`` = {(hardware, workload): n}."""
    total, defaulted = 0.0, 0
    for key, n in counts.items():
        m = medians.get(key)
        if m is None:
            defaulted += n
            m = default
        total += n * m
    return total, defaulted


def _grouped(qs) -> dict[tuple[int, int], int]:
    """{(hardware, workload): rows of ``qs``}."""
    out: dict[tuple[int, int], int] = defaultdict(int)
    for h, w, n in (
        qs.values_list("hardware_id", "candidate__workload_id")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("hardware_id", "candidate__workload_id", "n")
    ):
        out[(h, w)] += n
    return out


def _ahead(rows) -> tuple[dict[tuple[int, int], int], int]:
    """({(hardware, workload): n} of the first AHEAD_COSTED ``rows`` in queue order, all of
    ``rows``): a long queue's position is counted on the queue index alone, its workloads read
    for a bounded head only (each row read joins its candidate: 14,400 rows ahead of a third
    7,200-sample upload took 60-80 ms on PostgreSQL)."""
    # in the queue index's order (the queue order within a lane): sorted by the id alone, SQLite
    # walked the table in id order for a pre-check's OR of lanes, never filling the head (1.46 M
    # rows read: 350 ms for a test run's page)
    order = ("state", "hardware_id", "stage", "lane", "pk")
    head = _grouped(Evaluation.objects.filter(pk__in=rows.order_by(*order).values("pk")[:AHEAD_COSTED]))
    n = sum(head.values())
    return head, (rows.count() if n == AHEAD_COSTED else n)


def submission_queue(submission, now=None) -> dict | None:
    """The submission's place in its queue, or None when none of its rows is queued:

    ``{"queue", "lane", "position": rows ahead, "queued": its own queued rows there, "workers":
    live workers on the queue, "start_in_s", "finish_in_s" (None without a live worker),
    "estimated_with_default": rows costed at DEFAULT_SECONDS, "default_s",
    "running": [{"workload", "stage", "lane", "elapsed_s", "left_s", "worker", "mine"}]}``"""
    now = now or timezone.now()
    hw = submission.hardware
    # The submission's rows, queued ones counted: "queued" inside the aggregate, not the WHERE,
    # so that the plan starts from the submission's candidates whatever the statistics say. With
    # the state in the WHERE and statistics taken before 21,600 rows were queued, PostgreSQL
    # walked the whole queue for a 3-sample test run (117 ms; this form 8 ms, 31 ms for a
    # submission of 7,200 queued samples).
    # One read of them, per queue and workload: which queue, where in it, and what they cost.
    queued = Q(state=Evaluation.QUEUED)
    by_queue: dict[tuple[str, str], dict] = {}
    for r in (
        Evaluation.objects.filter(candidate__submission=submission)
        .values("stage", "lane", "hardware_id", "candidate__workload_id")
        .annotate(first=Min("pk", filter=queued), n=Count("pk", filter=queued))
        .order_by()
    ):
        if r["n"]:
            q = by_queue.setdefault((r["stage"], r["lane"]), {"first": r["first"], "n": 0, "own": {}})
            q["first"] = min(q["first"], r["first"])
            q["n"] += r["n"]
            q["own"][(r["hardware_id"], r["candidate__workload_id"])] = r["n"]
    if not by_queue:
        return None
    # the main stage's queue when rows wait there, else the pre-check's
    stage, lane = min(by_queue, key=lambda k: (k[0] != Evaluation.MAIN, k[1] != USER_LANE))
    first, n_mine, own = (by_queue[(stage, lane)][k] for k in ("first", "n", "own"))
    queue = stage_queue(stage, hw.slug, lane)
    ahead_q = Q(lane=lane, pk__lt=first)
    if lane == BACKGROUND_LANE:  # every queued user row of the queue goes first
        ahead_q |= Q(lane=USER_LANE)
    # The queue's state and stage (and target) stay outside the OR of the lanes: only such
    # top-level terms let SQLite search the (state, hardware, stage) index. Repeated inside each
    # branch, its planner scanned all 1.46 M rows (ANALYZE'd load benchmark database, a test
    # run's pre-check in the background lane: 720 ms for this query; 7 ms factored out).
    ahead, position = _ahead(Evaluation.objects.filter(_of_queue(stage, hw.pk), ahead_q))
    medians = median_seconds(stage, None if stage == Evaluation.PRECHECK else hw.pk)
    default = DEFAULT_SECONDS[stage]
    running_q = Q(state=Evaluation.RUNNING, stage=stage)
    if stage == Evaluation.MAIN:
        running_q &= Q(hardware_id=hw.pk)
    running_rows = list(
        Evaluation.objects.filter(running_q)
        .order_by("started_at", "pk")
        .values(
            "hardware_id",
            "candidate__workload_id",
            "candidate__workload__wid",
            "candidate__submission_id",
            "stage",
            "lane",
            "started_at",
            "worker",
        )[:RUNNING_COUNTED]
    )
    running, running_left = [], 0.0
    for r in running_rows:
        elapsed = max(0.0, (now - r["started_at"]).total_seconds()) if r["started_at"] else 0.0
        left = max(0.0, medians.get((r["hardware_id"], r["candidate__workload_id"]), default) - elapsed)
        running_left += left
        if len(running) < RUNNING_SHOWN:
            running.append(
                {
                    "workload": r["candidate__workload__wid"],
                    "stage": r["stage"],
                    "lane": r["lane"],
                    "elapsed_s": round(elapsed, 1),
                    "left_s": round(left, 1),
                    "worker": r["worker"],
                    "mine": r["candidate__submission_id"] == submission.pk,
                }
            )
            running[-1]["text"] = describe_running(running[-1])
    workers = sum(1 for qs in live_heartbeats(now).values_list("queues", flat=True) if queue in qs)
    ahead_s, ahead_default = _cost(ahead, medians, default)
    costed = sum(ahead.values())
    if position > costed:  # past the first AHEAD_COSTED rows: each at the mean of those
        ahead_s *= position / costed
    own_s, own_default = _cost(own, medians, default)
    start = finish = None
    if workers:
        start = round((ahead_s + running_left) / workers, 1)
        finish = round(start + own_s / workers, 1)
    out = {
        "queue": queue,
        "lane": lane,
        "position": position,
        "costed": costed,
        "queued": n_mine,
        "workers": workers,
        "start_in_s": start,
        "finish_in_s": finish,
        "estimated_with_default": ahead_default + own_default,
        "default_s": default,
        "running": running,
    }
    out["text"] = describe(out)
    return out


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def describe(q: dict) -> str:
    """One line for the page, the CLI and logs: the position, the estimate and its basis."""
    lane = " (background lane: after every user's work)" if q["lane"] == BACKGROUND_LANE else ""
    text = f"{q['position']} row(s) ahead of yours on {q['queue']}{lane}; {q['queued']} of yours queued there"
    if q["start_in_s"] is None:
        return text + "; no live worker consumes this queue, so no estimate"
    text += (
        f"; starts in ~{_duration(q['start_in_s'])}, all yours done in ~{_duration(q['finish_in_s'])}"
        f" ({q['workers']} worker{'s' if q['workers'] != 1 else ''}, median measured durations"
    )
    if q["estimated_with_default"]:
        text += f"; {q['estimated_with_default']} row(s) of workloads not yet measured here at {q['default_s']:.0f} s"
    if q["position"] > q["costed"]:
        text += f"; the first {q['costed']} rows ahead costed by workload, the other {q['position'] - q['costed']} at their mean"
    return text + ")"


def describe_running(r: dict) -> str:
    mine = " (yours)" if r["mine"] else ""
    return f"{r['workload']} {r['stage']}, {r['lane']} lane{mine}: running {_duration(r['elapsed_s'])}, ~{_duration(r['left_s'])} left"
