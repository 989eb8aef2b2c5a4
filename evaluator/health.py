"""Broker, queue and worker status for the health page and ``manage.py health``."""

from __future__ import annotations

import datetime
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from catalog.models import HardwareTarget
from evaluator import broker as broker_state
from evaluator.models import Evaluation, WorkerHeartbeat
from evaluator.queues import MAINTENANCE_QUEUE, PRECHECK_QUEUE, hardware_queue, stage_queue, with_background
from evaluator.workers import HEARTBEAT_SECONDS


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def broker_description() -> str:
    opts = settings.DRAMATIQ_BROKER.get("OPTIONS", {})
    kind = settings.DRAMATIQ_BROKER["BROKER"].rsplit(".", 1)[-1]
    where = _redact(opts["url"]) if "url" in opts else f"embedded Redis at {opts.get('unix_socket_path')}"
    return f"{kind} ({where})"


def queue_depths(queues) -> tuple[bool, dict[str, int | None], str]:
    """(reachable, {queue: messages the broker holds for it}, error message)."""
    try:
        return True, dict(broker_state.pending_messages(queues)), ""
    except Exception as exc:  # noqa: BLE001 - reported on the page, not raised
        return False, {q: None for q in queues}, f"{exc.__class__.__name__}: {exc}"


def live_heartbeats(now=None):
    """The heartbeat rows of the live workers: seen within the last three beats."""
    cutoff = (now or timezone.now()) - datetime.timedelta(seconds=3 * HEARTBEAT_SECONDS)
    return WorkerHeartbeat.objects.filter(last_seen_at__gte=cutoff)


EVALUATION_ACTORS = ("evaluate", "evaluate_background")
# running rows listed on /health/ (one per worker thread in practice; a cap against the absurd)
RUNNING_LISTED = 200


def running_by_worker(now=None) -> dict[str, list[dict]]:
    """{worker process name: the rows its threads run now} (one query). A row's holder is
    ``host:pid:thread``, its process's heartbeat name plus the thread (evaluator/workers.py)."""
    now = now or timezone.now()
    out: dict[str, list[dict]] = {}
    for r in (
        Evaluation.objects.filter(state=Evaluation.RUNNING)
        .order_by("started_at", "pk")
        .values(
            "pk",
            "worker",
            "stage",
            "lane",
            "started_at",
            "hardware__slug",
            "candidate__workload__wid",
            "candidate__index",
            "candidate__submission_id",
            "candidate__submission__test_run",
        )[:RUNNING_LISTED]
    ):
        process = r["worker"].rsplit(":", 1)[0] if r["worker"].count(":") >= 2 else r["worker"]
        # a test run is its owner's alone: the page says one runs, never which or what
        private = r["candidate__submission__test_run"]
        out.setdefault(process, []).append(
            {
                "evaluation": None if private else r["pk"],
                "submission": None if private else r["candidate__submission_id"],
                "test_run": private,
                "workload": None if private else r["candidate__workload__wid"],
                "index": None if private else r["candidate__index"],
                "hardware": r["hardware__slug"],
                "stage": r["stage"],
                "lane": r["lane"],
                "elapsed_s": round((now - r["started_at"]).total_seconds(), 1) if r["started_at"] else None,
            }
        )
    return out


def status() -> dict:
    targets = list(HardwareTarget.objects.all())
    queues = sorted(
        with_background([PRECHECK_QUEUE] + [hardware_queue(t.slug) for t in targets]) | {MAINTENANCE_QUEUE},
        key=lambda q: (q.startswith("background."), q != PRECHECK_QUEUE, q != MAINTENANCE_QUEUE, q),
    )
    reachable, depths, error = queue_depths(queues)
    workers = list(live_heartbeats())
    running = running_by_worker()
    pending = {}
    slugs = {t.pk: t.slug for t in targets}
    for row in (
        Evaluation.objects.filter(state__in=[Evaluation.QUEUED, Evaluation.RUNNING])
        # the hardware's id, not its slug: a join per counted row cost ~17 ms of 91 with 21,600
        # queued rows (PostgreSQL); Count("*"), not the pk: the count reads the queue index alone
        .values("hardware_id", "stage", "lane", "state")
        .annotate(n=Count("*"))
        .order_by()
    ):
        q = stage_queue(row["stage"], slugs[row["hardware_id"]], row["lane"])
        pending.setdefault(q, {"queued": 0, "running": 0})[row["state"]] += row["n"]
    return {
        "broker": broker_description(),
        "reachable": reachable,
        "error": error,
        "queues": [
            {
                "name": q,
                "depth": depths.get(q),
                "queued": pending.get(q, {}).get("queued", 0),
                "running": pending.get(q, {}).get("running", 0),
                "workers": sum(1 for w in workers if q in w.queues),
            }
            for q in queues
        ],
        "workers": [
            {
                "name": w.name,
                "hardware": w.hardware,
                "queues": w.queues,
                "last_seen_at": w.last_seen_at.isoformat(),
                "started_at": w.started_at.isoformat(),
                "backends": w.backends,
                "running": running.get(w.name, []),
                # work without an Evaluation row (an expert sweep), from the worker's own beat
                "other_tasks": [t for t in (w.tasks or []) if t.get("actor") not in EVALUATION_ACTORS],
            }
            for w in workers
        ],
    }


def live_workers_for(queue: str) -> int:
    return sum(1 for qs in live_heartbeats().values_list("queues", flat=True) if queue in qs)
