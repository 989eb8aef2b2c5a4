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
    """While the broker is away, Dramatiq restarts each consumer thread every 3 s and logs two
    lines per queue each time. Here the restarts back off like the database waits (0.5 s
    doubling to 30 s, per thread) and the outage is logged once when it starts and once when it
    ends (outage.BROKER). Unacknowledged messages stay with the broker meanwhile: Redis keeps
    them in the consumer's ack set, RabbitMQ requeues them when the connection drops."""

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
        # the consumer threads' loggers exist per queue; their restart lines say nothing new
        # while outage.BROKER already said the broker is away
        queues = worker.consumer_whitelist or broker.get_declared_queues()
        for q in queues:
            for name in (q, f"{q}.DQ"):
                logging.getLogger(f"dramatiq.worker.ConsumerThread({name})").addFilter(self._quiet)

    def _quiet(self, record: logging.LogRecord) -> bool:
        return not (outage.BROKER.down and record.getMessage().startswith(self.RESTART_LINES))


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
