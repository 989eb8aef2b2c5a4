"""What a worker does with one Evaluation row: claim it under a lease, run the isolated harness,
store the verdict, move it to the next stage, refresh the leaderboard aggregates.

Infrastructure failures raise (Dramatiq retries with backoff, the row goes back to queued);
a candidate's own failure is an outcome and is never retried.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time

import dramatiq
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from catalog.models import Baseline
from evaluator import outage
from evaluator.models import Evaluation, WorkloadDuration, current_harness_version
from evaluator.outage import with_database
from evaluator.pipeline import enqueue_many
from evaluator.queues import stage_queue
from evaluator.reuse import reusable_record
from evaluator.signals import evaluation_finished
from evaluator.workers import worker_name
from jaxbench import HARNESS_VERSION
from jaxbench.record import Outcome, new_record
from jaxbench.verdict import review as review_rules

log = logging.getLogger(__name__)

MAX_ATTEMPTS = settings.JAXBENCH_MAX_ATTEMPTS


class InfrastructureError(RuntimeError):
    """The harness could not produce a verdict for reasons that are not the candidate's."""


def lease_seconds() -> int:
    return settings.JAXBENCH_LEASE_SECONDS


def claim(evaluation_id: int, me: str) -> Evaluation | None:
    """Take the row if it is queued or its lease expired; None when there is nothing to do."""
    now = timezone.now()
    with transaction.atomic():
        ev = (
            Evaluation.objects.select_for_update()
            .select_related("candidate", "hardware", "candidate__workload")
            .filter(pk=evaluation_id)
            .first()
        )
        if ev is None or ev.state in Evaluation.FINAL_STATES:
            return None
        if ev.state == Evaluation.RUNNING and ev.lease_expires_at and ev.lease_expires_at > now:
            return None  # another worker holds a live lease
        if ev.attempts >= MAX_ATTEMPTS:
            ev.state = Evaluation.FAILED
            ev.message = f"infrastructure failure: gave up after {ev.attempts} attempts"
            ev.finished_at = now
            ev.lease_expires_at = None
            ev.save(update_fields=["state", "message", "finished_at", "lease_expires_at"])
            _after_final(ev)
            return None
        mismatch = workload_version_mismatch(ev) or harness_version_mismatch(ev)
        if mismatch:
            ev.state = Evaluation.FAILED
            ev.message = mismatch
            ev.finished_at = now
            ev.lease_expires_at = None
            ev.save(update_fields=["state", "message", "finished_at", "lease_expires_at"])
            _after_final(ev)
            return None
        ev.state = Evaluation.RUNNING
        ev.worker = me[:120]
        ev.attempts += 1
        ev.started_at = now
        ev.lease_expires_at = now + datetime.timedelta(seconds=lease_seconds())
        ev.save(update_fields=["state", "worker", "attempts", "started_at", "lease_expires_at"])
        return ev


def workload_version_mismatch(ev: Evaluation) -> str | None:
    """Why this worker cannot evaluate ``ev`` under the workload version the row was created
    for (its registry defines another one: a worker older or newer than the portal's catalogue),
    or None. Such a row fails as an infrastructure failure instead of recording a result under
    the wrong version; ``manage.py rescore`` schedules the current version anew."""
    from jaxbench import workloads as registry  # deferred: the registry's modules import JAX

    try:
        have = registry.get(ev.candidate.workload.wid).version
    except KeyError:  # not in this worker's registry: the harness names that failure itself
        return None
    if have == ev.workload_version:
        return None
    return (
        f"infrastructure failure: this row asks for workload {ev.candidate.workload.wid} version "
        f"{ev.workload_version}, the worker's registry defines version {have}"
    )


def harness_version_mismatch(ev: Evaluation) -> str | None:
    """Why this worker cannot evaluate ``ev`` under the harness version the row was created for
    (the worker runs another ``HARNESS_VERSION``: older or newer than the portal that scheduled
    it), or None. Like a workload version mismatch, such a row fails as an infrastructure failure
    rather than record a result under another harness; ``manage.py rescore`` schedules it anew."""
    have = current_harness_version()
    if ev.harness_version == have:
        return None
    return f"infrastructure failure: this row asks for harness {ev.harness_version}, the worker runs harness {have}"


def stamp_workload_version(record: dict, ev: Evaluation) -> dict:
    """The record with the workload version and content hash it was measured under (a reused
    verdict keeps those of its precedent, which has the same version)."""
    from jaxbench import workloads as registry  # deferred: the registry's modules import JAX

    if "workload_version" in record:
        return record
    try:
        wl = registry.get(ev.candidate.workload.wid)
    except KeyError:
        return record
    return dict(record, workload_version=wl.version, workload_content_hash=wl.content_hash)


class LeaseKeeper:
    """Renews the lease while the harness runs, so only a dead worker's rows expire."""

    def __init__(self, evaluation_id: int, me: str):
        self.evaluation_id, self.me = evaluation_id, me
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"lease-{evaluation_id}")

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)

    def _run(self):
        period = max(1.0, lease_seconds() / 3)
        while not self._stop.wait(period):
            try:
                close_old_connections()
                Evaluation.objects.filter(pk=self.evaluation_id, state=Evaluation.RUNNING, worker=self.me[:120]).update(
                    lease_expires_at=timezone.now() + datetime.timedelta(seconds=lease_seconds())
                )
            except outage.UNREACHABLE as exc:  # said once per outage; the next period tries again
                outage.DATABASE.note_down(exc)
            except Exception:
                log.warning("lease renewal failed for %s", self.evaluation_id, exc_info=True)
            else:
                outage.DATABASE.note_up()
            finally:
                connection.close()


def release(evaluation_id: int, me: str, reason: str) -> None:
    """Put a row we hold back to queued after an infrastructure failure (the retry re-claims it)."""
    Evaluation.objects.filter(pk=evaluation_id, state=Evaluation.RUNNING, worker=me[:120]).update(
        state=Evaluation.QUEUED,
        lease_expires_at=None,
        message=f"retrying after: {reason}"[:2000],
        enqueued_at=timezone.now(),
    )


def _profile_for(ev: Evaluation) -> str:
    return "small" if ev.stage == Evaluation.PRECHECK else ev.hardware.profile


def baseline_for(workload, hardware, *, fresh: bool = False) -> Baseline:
    """The XLA baseline for this workload/hardware/profile/JAX/harness version, kept in the
    database. On first need (or ``fresh``: measure_baselines --force) this worker, which runs
    on that hardware, takes it from this host's disk cache where another worker or the command
    line timed it under the same key (harness.baseline_alone: no cold child for it), else
    measures it now and stores it there too."""
    import jax

    from jaxbench import harness

    key = dict(
        workload=workload,
        hardware=hardware,
        profile=hardware.profile,
        jax_version=jax.__version__,
        harness_version=HARNESS_VERSION,
    )
    existing = Baseline.objects.filter(**key).first()
    if existing and not fresh:
        return existing
    record = harness.baseline_alone(
        workload.wid,
        profile=hardware.profile,
        hardware=hardware.slug,
        cache="fresh" if fresh else "disk",
        timeouts=harness_timeouts(),
    )
    # where it came from, for the log; the stored record is measure_baseline's (its measured_at
    # says when it was timed)
    origin = record.pop("cache", "measured")
    log.info("baseline of %s on %s (%s): %s", workload.wid, hardware.slug, hardware.profile, origin)
    median = (record.get("timing") or {}).get("median_s")
    if not median:
        raise InfrastructureError(f"baseline of {workload.wid} on {hardware.slug} failed: {record.get('message')}")
    obj, _ = Baseline.objects.update_or_create(**key, defaults={"median_s": median, "record": record})
    return obj


def harness_timeouts() -> dict | None:
    """Per-phase limits from JAXBENCH_TIMEOUTS, e.g. ``compile=60,check=120`` (seconds)."""
    return settings.JAXBENCH_TIMEOUTS


_local = threading.local()


def warm_pool():
    """One warm sandboxed child per worker thread (JAX already imported in it), so the next
    candidate pays only for its own compile and run. Each child still serves one candidate."""
    from jaxbench import harness

    pool = getattr(_local, "pool", None)
    if pool is None:
        pool = _local.pool = harness.WarmPool()
    return pool


def run_harness(ev: Evaluation) -> tuple[dict, str]:
    """Run the stage's harness work. Returns (record, next state)."""
    wl = ev.candidate.workload
    code = ev.candidate.code
    require_pallas = settings.JAXBENCH_REQUIRE_PALLAS
    if ev.stage == Evaluation.PRECHECK:
        return precheck(wl, code, ev.hardware, require_pallas)
    baseline = baseline_for(wl, ev.hardware)
    record = warm_pool().evaluate(
        wl.wid,
        code,
        profile=ev.hardware.profile,
        hardware=ev.hardware.slug,
        require_pallas=require_pallas,
        baseline=baseline.record,
        timeouts=harness_timeouts(),
    )
    return record, Evaluation.DONE


def precheck(wl, code: str, hardware, require_pallas: bool) -> tuple[dict, str]:
    """Stage 1 for accelerator targets, on CPU: lower for the target platform at full shapes,
    then numerics in TPU interpret mode at the small profile. Stops candidates that fail."""
    from jaxbench import harness

    lowered = harness.lower_for_platform(
        wl.wid,
        code,
        platform=hardware.platform,
        profile="full",
        timeouts=harness_timeouts(),
        require_pallas=require_pallas,
    )
    if lowered.get("outcome") not in (None, "ok", "lowered"):
        lowered["precheck"] = "lowering"
        return lowered, Evaluation.SKIPPED
    numerics = harness.evaluate(
        wl.wid,
        code,
        profile="small",
        hardware="cpu",
        require_pallas=require_pallas,
        baseline=None,
        timeouts=harness_timeouts(),
    )
    numerics["precheck"] = "numerics"
    numerics["lowering"] = {
        k: lowered.get(k) for k in ("platform", "profile", "duration_s", "has_pallas_call", "pallas_share")
    }
    outcome = numerics.get("outcome")
    if outcome in (Outcome.INCORRECT, Outcome.REJECTED, Outcome.TIMEOUT, Outcome.RUNTIME_ERROR):
        return numerics, Evaluation.SKIPPED
    if outcome == Outcome.COMPILE_ERROR:
        # A candidate that cannot run at the small sizes only for shape reasons goes on, marked.
        if numerics.get("error_category") in ("shape", "unsupported_shape"):
            numerics["numerics_prechecked"] = False
            return numerics, Evaluation.DONE
        return numerics, Evaluation.SKIPPED
    numerics["numerics_prechecked"] = True
    return numerics, Evaluation.DONE


def finish(ev: Evaluation, record: dict, state: str, reused_from=None) -> None:
    now = timezone.now()
    outcome = record.get("outcome") or ""
    with transaction.atomic():
        locked = Evaluation.objects.select_for_update().filter(pk=ev.pk).first()
        if locked is None:
            return  # deleted while it ran (a test run its owner deleted, or one that expired)
        if locked.state in Evaluation.FINAL_STATES:
            return  # another attempt finished it first; keep exactly one result
        locked.record = stamp_workload_version(record, ev)
        locked.outcome = outcome if ev.stage == Evaluation.MAIN or state == Evaluation.SKIPPED else ""
        locked.speedup = record.get("speedup") if ev.stage == Evaluation.MAIN else None
        ci = record.get("speedup_ci") if ev.stage == Evaluation.MAIN else None
        locked.speedup_lo, locked.speedup_hi = ci if ci else (None, None)
        locked.message = (record.get("message") or "")[:4000]
        # held means held (TRUST.md 6): a held correct result waits for a staff review before
        # it counts anywhere (jaxbench.verdict.review); a reused verdict keeps its review
        locked.review = review_rules.state_from_record(record, locked.outcome)
        locked.state = state
        locked.finished_at = now
        locked.lease_expires_at = None
        locked.reused_from = reused_from
        locked.save()
        next_ids = []
        if ev.stage == Evaluation.PRECHECK and state == Evaluation.DONE:
            main, created = Evaluation.objects.get_or_create(
                candidate_id=ev.candidate_id,
                hardware=ev.hardware,
                stage=Evaluation.MAIN,
                workload_version=ev.workload_version,
                harness_version=ev.harness_version,
                # the row's lane now (a promoted test run's moved to the user lane meanwhile)
                defaults={"code_sha256": ev.code_sha256, "enqueued_at": now, "lane": locked.lane},
            )
            if created:
                next_ids.append(main.pk)
        if next_ids:
            queue = stage_queue(Evaluation.MAIN, ev.hardware.slug, locked.lane)
            transaction.on_commit(lambda: enqueue_many(next_ids, queue))
        if reused_from is None and locked.started_at is not None:
            note_duration(locked, ev.candidate.workload_id, (now - locked.started_at).total_seconds())
        # In the same transaction: the aggregates commit together with the verdict.
        _after_final(locked)


def note_duration(ev: Evaluation, workload_id: int, seconds: float) -> None:
    """Keep the last WorkloadDuration.KEEP measured durations of ``ev``'s workload, hardware and
    stage: the queue's estimates read their median (evaluator/queue_status.py)."""
    if seconds < 0:
        return
    row, _ = WorkloadDuration.objects.select_for_update().get_or_create(
        hardware_id=ev.hardware_id, workload_id=workload_id, stage=ev.stage
    )
    row.recent = [*row.recent, round(seconds, 3)][-WorkloadDuration.KEEP :]
    row.save(update_fields=["recent", "updated_at"])


def _after_final(ev: Evaluation) -> None:
    # Receivers run synchronously inside the verdict's transaction (the leaderboard folds the
    # verdict into its aggregates), so the aggregates commit or roll back with the verdict.
    evaluation_finished.send(sender=Evaluation, evaluation=ev)


def died_again_record(ev: Evaluation, attempts: list[dict], harness_record: dict | None = None) -> dict:
    """The verdict of a candidate whose fresh child died of the same outside signal twice: it is
    the candidate's ``runtime_error`` (crash), with every attempt in the record and, where the
    harness gave it (``ChildKilled.record``), what the harness recorded of the last attempt up to
    the death: its sandbox, seeds, versions, phases and the children's output. Such a verdict is
    never reused for identical code (reusable_record)."""
    death = attempts[-1]["death"]
    wl = ev.candidate.workload
    rec = new_record(**(harness_record or {}))
    rec.update(
        workload=wl.wid,
        workload_slug=wl.slug,
        profile=_profile_for(ev),
        hardware=ev.hardware.slug,
        require_pallas=settings.JAXBENCH_REQUIRE_PALLAS,
        outcome=Outcome.RUNTIME_ERROR,
        error_category="crash",
        phase=death["phase"],
        message=(
            f"the child died of {death['signal']} during {death['phase']} on {len(attempts)} fresh children in a "
            "row: a signal the harness did not send, so it was retried; the same death again is the candidate's"
        ),
    )
    rec["infrastructure_attempts"] = attempts  # only on such records: reusable_record looks for it
    return rec


def run_evaluation(evaluation_id: int) -> str:
    """The body of the ``evaluate`` actor. Returns a short status for logs and tests.

    While the database is away the claim waits for it (outage.with_database: capped backoff,
    one log line per outage) instead of failing the message; a verdict measured before or
    during an outage is kept and its commit retried until the lease would have expired."""
    me = worker_name(per_thread=True)
    ev = with_database(lambda: claim(evaluation_id, me))
    if ev is None:
        return "nothing to do"
    try:
        previous = reusable_record(ev)
        if previous is not None:
            finish(ev, dict(previous.record, reused=True), previous.state, reused_from=previous)
            return "reused"
        with LeaseKeeper(ev.pk, me):
            record, state = run_harness(ev)
    except Exception as exc:
        death = getattr(exc, "death", None)  # jaxbench.harness.ChildKilled
        if death is not None:
            attempt = {
                "attempt": ev.attempts,
                "worker": me,
                "death": death,
                "message": str(exc)[:2000],
                "at": timezone.now().isoformat(),
            }
            if any(f.get("death") == death for f in ev.failures):
                rec = died_again_record(ev, [*ev.failures, attempt], getattr(exc, "record", None))
                with_database(lambda: finish(ev, rec, Evaluation.DONE))
                return "died the same way again"
            Evaluation.objects.filter(pk=ev.pk).update(failures=[*ev.failures, attempt])
            release(ev.pk, me, f"{exc.__class__.__name__}: {exc}")
            # one line, and a retry with the actor's own backoff: the record keeps the detail,
            # a traceback of the harness's own frames says nothing more
            log.warning(
                "evaluation %s: the child died of %s during %s (a signal the harness did not send); retrying",
                ev.pk,
                death.get("signal"),
                death.get("phase"),
            )
            raise dramatiq.Retry(f"the child died of {death.get('signal')}") from None
        release(ev.pk, me, f"{exc.__class__.__name__}: {exc}")
        if getattr(exc, "load_spoiled", False):  # jaxbench.harness.MeasurementUntrusted
            # the machine's load, past the harness's own re-timings: one line and a retry with the
            # actor's backoff, never the candidate's verdict (TRUST.md 5); no traceback to read
            log.warning("evaluation %s: the measurement could not be trusted (%s); retrying", ev.pk, exc)
            raise dramatiq.Retry(f"untrusted measurement: {exc}"[:500]) from None
        raise
    if record.get("outcome") in (None, "infrastructure_error"):
        release(ev.pk, me, record.get("message") or "no verdict")
        raise InfrastructureError(record.get("message") or "the harness returned no verdict")
    # the lease was last renewed at most a third of it ago: store the verdict before it lapses
    lease_left = time.monotonic() + lease_seconds() * 2 / 3
    try:
        with_database(lambda: finish(ev, record, state), deadline=lease_left)
    except outage.UNREACHABLE:
        # the row's lease lapses: another attempt will measure it again. One line, and a retry
        # Dramatiq does not log as a failure (a traceback per row says nothing more)
        log.warning(
            "evaluation %s: measured, but the database stayed away until its lease lapsed; it will be measured again",
            ev.pk,
        )
        raise dramatiq.Retry("the database stayed away past the lease") from None
    return state
