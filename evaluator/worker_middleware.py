"""Dramatiq middleware: a worker consumes only the queue of the hardware it runs on.

This is what makes ``manage.py rundramatiq`` on a TPU VM enough to serve ``eval.tpu-v6e``: the
worker detects its hardware at boot (``jax.devices()`` in a short-lived child: the worker process
never opens an accelerator itself) and restricts itself to
``eval.<slug>`` (plus ``precheck`` and ``maintenance`` on CPU hosts), each evaluation queue with
its ``background.`` twin (demo and maintenance work, run at a lower priority: evaluator/queues.py).
``JAXBENCH_WORKER_QUEUES`` (comma-separated) overrides the choice; the background twins of the
queues it names are consumed too.
"""

import logging
import os
import socket
import threading

import dramatiq
import redis
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone
from dramatiq.errors import BrokerConnectionError, ConnectionClosed

from evaluator import broker as broker_state
from evaluator import outage, workers
from evaluator.queues import MAINTENANCE_QUEUE, PRECHECK_QUEUE, hardware_queue, with_background
from evaluator.workers import HEARTBEAT_SECONDS, worker_name
from jaxbench.hardware import detect_for_worker, initialized_backends

log = logging.getLogger(__name__)

CPU_EXTRA_QUEUES = (PRECHECK_QUEUE, MAINTENANCE_QUEUE)


def queues_for(slug: str) -> set[str]:
    queues = {hardware_queue(slug)}
    if slug == "cpu":
        queues.update(CPU_EXTRA_QUEUES)
    return with_background(queues)


class HardwareQueues(dramatiq.Middleware):
    def before_worker_boot(self, broker, worker):
        from jaxbench.harness.prepare import packages_problem  # deferred: no harness import at module level (pyproject)

        problem = packages_problem()
        if problem:  # every evaluation would fail inside its export: refuse to start, saying why
            raise RuntimeError(problem)
        override = settings.JAXBENCH_WORKER_QUEUES
        if override:
            queues = with_background(override)
            slug = settings.JAXBENCH_WORKER_HARDWARE
        else:
            # in a short-lived child: this process must never open the accelerator itself
            slug = detect_for_worker().slug  # refuses a host whose accelerator is missing
            queues = queues_for(slug)
        workers.set_hardware(slug)
        for q in sorted(queues):
            broker.declare_queue(q)
        worker.consumer_whitelist = queues
        log.info("worker for hardware %s consuming %s", slug, ", ".join(sorted(queues)))


class SweepRunDirs(dramatiq.Middleware):
    """At worker start, removes the sandbox run dirs left by processes that were killed outright
    (a SIGKILLed worker cannot remove its children's; jaxbench/sandbox/rundir.py)."""

    def before_worker_boot(self, broker, worker):
        from jaxbench.sandbox import rundir  # deferred: no sandbox import at module level (pyproject)

        removed = rundir.sweep()
        if removed:
            log.info("removed %d sandbox run dir(s) of killed processes", len(removed))


class KeepOffTimingCores(dramatiq.Middleware):
    """Keeps every thread of the worker process off the host's dedicated timing cores
    (jaxbench/sandbox/cores.py): a timer's timing phase has its core to itself. At boot and
    again once the worker's threads exist (threads started later inherit it)."""

    def before_worker_boot(self, broker, worker):
        from jaxbench.sandbox import cores  # deferred: no sandbox import at module level (pyproject)

        kept = cores.keep_off_timing_cores()
        if kept is not None:
            log.info("worker kept on cores %s, off the timing cores %s", kept, cores.timing_cores())

    def after_worker_boot(self, broker, worker):
        from jaxbench.sandbox import cores  # deferred: as above

        cores.keep_off_timing_cores()


class Heartbeat(dramatiq.Middleware):
    """Writes this worker process's row in WorkerHeartbeat while it runs, with what its threads
    run now (written at once when that changes, else every HEARTBEAT_SECONDS)."""

    def __init__(self):
        self._tasks: dict[int, dict] = {}
        self._tasks_lock = threading.Lock()
        self._wake = threading.Event()

    def before_process_message(self, broker, message):
        task = {
            "actor": message.actor_name,
            "args": [a for a in message.args if isinstance(a, (int, str, float, type(None)))][:4],
            "queue": message.queue_name,
            "started_at": timezone.now().isoformat(),
        }
        with self._tasks_lock:
            self._tasks[threading.get_ident()] = task
        self._wake.set()

    def after_process_message(self, broker, message, *, result=None, exception=None):
        with self._tasks_lock:
            self._tasks.pop(threading.get_ident(), None)
        self._wake.set()

    after_skip_message = after_process_message

    def tasks(self) -> list[dict]:
        with self._tasks_lock:
            return sorted(self._tasks.values(), key=lambda t: t["started_at"])

    def after_worker_boot(self, broker, worker):
        self._stop = threading.Event()
        self._name = worker_name()  # the same name the worker signs its work with
        self._started = timezone.now()
        self._queues = sorted(worker.consumer_whitelist or broker.get_declared_queues())
        self._thread = threading.Thread(target=self._loop, name="jaxbench-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self):
        # deferred: django_dramatiq loads this middleware before the app registry is ready
        from catalog.models import HardwareTarget
        from evaluator.models import WorkerHeartbeat

        close_old_connections()
        now = timezone.now()
        hw = workers.hardware()
        WorkerHeartbeat.objects.update_or_create(
            name=self._name,
            defaults={
                "hostname": socket.gethostname(),
                "pid": os.getpid(),
                "hardware": hw,
                "queues": self._queues,
                "started_at": self._started,
                "last_seen_at": now,
                "backends": initialized_backends(),
                "tasks": self.tasks(),
            },
        )
        HardwareTarget.objects.filter(slug=hw).update(last_worker_seen_at=now)

    def _loop(self):
        while not self._stop.is_set():
            try:
                self._beat()
            except outage.UNREACHABLE as exc:  # logged once per outage; try again next beat
                outage.DATABASE.note_down(exc)
            except Exception:
                log.warning("heartbeat failed", exc_info=True)
            else:
                outage.DATABASE.note_up()
            self._wake.wait(HEARTBEAT_SECONDS)
            self._wake.clear()

    def before_worker_shutdown(self, broker, worker):
        if getattr(self, "_stop", None):
            self._stop.set()
            self._wake.set()
            # a beat under way would write the row again after the delete below (a stopped
            # worker listed as live for three beats, its row kept for an hour): it ends first
            self._thread.join(timeout=HEARTBEAT_SECONDS)
            try:
                from evaluator.models import WorkerHeartbeat  # deferred: see _beat

                close_old_connections()
                WorkerHeartbeat.objects.filter(name=self._name).delete()
            except Exception:
                log.warning("could not remove heartbeat", exc_info=True)


class Reconciler(dramatiq.Middleware):
    """Re-sends lost or orphaned evaluations: once at worker start, then periodically."""

    def after_worker_boot(self, broker, worker):
        self._stop = threading.Event()
        self._interval = settings.JAXBENCH_RECONCILE_INTERVAL_SECONDS
        threading.Thread(target=self._loop, name="jaxbench-reconciler", daemon=True).start()

    def _loop(self):
        from evaluator.reconciler import reconcile  # deferred: it imports models (see Heartbeat._beat)

        first = True
        while first or not self._stop.wait(self._interval):
            first = False
            try:
                close_old_connections()
                reconcile()
            except outage.UNREACHABLE as exc:  # logged once per outage; try again next round
                outage.DATABASE.note_down(exc)
            except broker_state.UNREACHABLE as exc:  # the same, for the broker
                outage.BROKER.note_down(exc)
            except Exception:
                log.warning("reconcile failed", exc_info=True)
            finally:
                connection.close()

    def before_worker_shutdown(self, broker, worker):
        if getattr(self, "_stop", None):
            self._stop.set()


class CalmConsumers(dramatiq.Middleware):
    """While the broker is away, Dramatiq restarts each consumer thread every 3 s (two lines per
    queue each time) and retries each in-flight message's ack every 5 s (three lines each time).
    Here the restarts back off like the database waits (0.5 s doubling to 30 s, per thread) and
    the outage is logged once when it starts and once when it ends (outage.BROKER), with the
    count of Dramatiq's lines about it held back meanwhile (``calm_log``). Unacknowledged
    messages stay with the broker meanwhile: Redis keeps them in the consumer's ack set,
    RabbitMQ requeues them when the connection drops."""

    RESTART_LINES = ("Consumer encountered a connection error", "Restarting consumer in")

    def before_worker_boot(self, broker, worker):
        consume = broker.consume

        def calm_consume(queue_name, prefetch=1, timeout=5000):
            if outage.BROKER.down:
                outage.BROKER.back_off()
            try:
                inner = consume(queue_name, prefetch=prefetch, timeout=timeout)
                broker_state.ping(broker)  # a Redis consumer connects only when it first fetches
            except broker_state.UNREACHABLE as exc:
                outage.BROKER.note_down(exc)
                if isinstance(exc, BrokerConnectionError):
                    raise
                raise ConnectionClosed(exc) from None  # the kind Dramatiq restarts its consumer for
            # the one proof that the broker is back: a round trip made just now (a fetch that
            # returns nothing may have been made before the outage, or not at all)
            outage.BROKER.note_up()
            return _WatchedConsumer(inner)

        broker.consume = calm_consume
        for name in dramatiq_loggers(broker, worker.consumer_whitelist or broker.get_declared_queues()):
            logging.getLogger(name).addFilter(calm_log)

    def after_ack(self, broker, message):
        # a Redis ack is a round trip: an in-flight message acked after an outage ends it at once
        # (the consumer threads may still be backing off); RabbitMQ's ack only queues a frame
        if not broker_state.is_rabbitmq(broker):
            outage.BROKER.note_up()


# what says that the broker is away in a Dramatiq log record (not the builtin ConnectionError of
# broker.UNREACHABLE, which an actor may raise for reasons of its own)
BROKER_ERRORS = (BrokerConnectionError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def dramatiq_loggers(broker, queues) -> list[str]:
    """The Dramatiq loggers that speak of a broker connection error: each consumer thread's (the
    restarts, and the ack retries of the messages fetched from its queue), the worker threads'
    (an actor or a middleware failing on the broker), the worker's (requeueing at shutdown) and
    the broker's (a middleware's hook failing, e.g. Retries sending a retry)."""
    names = [f"dramatiq.worker.ConsumerThread({n})" for q in sorted(queues) for n in (q, f"{q}.DQ")]
    return names + [
        "dramatiq.worker.WorkerThread",
        "dramatiq.worker.Worker",
        f"dramatiq.broker.{type(broker).__name__}",
    ]


def broker_error(record: logging.LogRecord) -> BaseException | None:
    """The broker connection error a log record reports (its exception, an argument of its
    message, or what either was raised from), or None."""
    errors = [record.exc_info[1]] if record.exc_info else []
    if isinstance(record.args, tuple):
        errors += [a for a in record.args if isinstance(a, BaseException)]
    for exc in errors:
        for _ in range(5):  # a short chain: what wrapped the connection error
            if exc is None:
                break
            if isinstance(exc, BROKER_ERRORS):
                return exc
            exc = exc.__cause__ or exc.__context__
    return None


def calm_log(record: logging.LogRecord) -> bool:
    """A logging filter: Dramatiq's lines about a broker outage go to outage.BROKER instead (the
    first starts the outage, which it logs once; the rest are counted, the count said when the
    broker is back). Every other line passes."""
    exc = broker_error(record)
    if exc is not None:
        outage.BROKER.hold_back(exc)
        return False
    if outage.BROKER.down and record.getMessage().startswith(CalmConsumers.RESTART_LINES):
        outage.BROKER.hold_back(None)
        return False
    return True


class _WatchedConsumer:
    """A Dramatiq consumer that tells outage.BROKER when fetching fails (calm_consume says when
    the broker is back)."""

    def __init__(self, inner):
        self._inner = inner

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._inner)
        except broker_state.UNREACHABLE as exc:
            outage.BROKER.note_down(exc)
            raise

    def __getattr__(self, name):
        return getattr(self._inner, name)
