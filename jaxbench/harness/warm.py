"""The warm pool: pre-spawned sandboxed children waiting for their single candidate."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from ..record import EvalRecord
from ..sandbox import cores, pair
from ..sandbox.child import SandboxedChild
from ..sandbox.options import Limits
from ..sandbox.pair import platform_hint, warm_limits
from .api import evaluate_case, evaluate_with
from .export import new_export_child
from .run import new_timer_child
from .settings import DEFAULT_TIMEOUTS, InfrastructureError


def auto_refill(platform: str) -> str:
    """When a pool refills by default: "immediately" where starting children cannot disturb a
    timing phase (an accelerator's, or a CPU timer's on its dedicated core), else "after"."""
    return "immediately" if platform != "cpu" or cores.timing_cores() else "after"


class WarmPool:
    """Keeps ``size`` pre-spawned sandboxed children (JAX imported, hello received) waiting
    for their single candidate, so that per-candidate overhead is compile + run + verdict.

    Each child serves ONE candidate and exits; a replacement is started right after a
    candidate finishes (``refill="after"``: never while a candidate is being timed) or as soon
    as one is taken (``refill="immediately"``: the next candidate finds its pair ready).
    ``refill="auto"`` (the default) refills immediately where the start-up cannot touch the
    timed core: on an accelerator (device-side timing, under the device's lock) and on a CPU
    host with a dedicated timing core (``cores.timing_cores``: children start on the other
    cores); otherwise after. Children are spawned from the pool's own
    long-lived thread (bubblewrap ties a child's life to the spawning thread). Children are
    sized for ``profile``'s largest inputs via ``limits`` (default: generous for ``full``)."""

    def __init__(
        self, platform: str | None = None, *, size: int = 1, limits: Limits | None = None, refill: str = "auto"
    ):
        if refill not in ("after", "immediately", "auto"):
            raise ValueError("refill must be 'after', 'immediately' or 'auto'")
        self.platform = platform or platform_hint(None)
        self.size = max(1, int(size))
        self.refill = refill if refill != "auto" else auto_refill(self.platform)
        self.limits = limits or warm_limits(self.platform)
        self._ready: queue.Queue[tuple[SandboxedChild, SandboxedChild] | None] = queue.Queue()
        # 1: start a pair; a used SandboxedChild: close it; None: stop
        self._requests: queue.Queue[int | SandboxedChild | None] = queue.Queue()
        self._closed = False
        self._errors: list[str] = []
        self._thread = threading.Thread(target=self._spawner, name="jaxbench-warm-pool", daemon=True)
        self._thread.start()
        for _ in range(self.size):
            self._requests.put(1)

    def _spawner(self) -> None:
        while True:
            item = self._requests.get()
            if isinstance(item, SandboxedChild):
                item.close()  # a used child: cleaned up here, off the caller's path
                continue
            if item is None:
                return
            if self._closed:
                continue
            started: list[SandboxedChild] = []
            try:
                child = new_timer_child(self.platform, self.limits)
                started.append(child)
                child.hello(DEFAULT_TIMEOUTS["startup"])
                exporter = new_export_child()
                started.append(exporter)
                pair.beside(exporter, child)
                exporter.hello(DEFAULT_TIMEOUTS["startup"])
                if self._closed:
                    child.close()
                    exporter.close()
                    continue
                self._ready.put((child, exporter))
            except Exception as exc:  # noqa: BLE001 - reported to the next acquire()
                # a pair is warm whole or not at all: the half that started is closed, not
                # left idle (and holding its memory) until the worker stops
                for c in started:
                    c.close()
                self._errors.append(f"{type(exc).__name__}: {exc}")
                self._ready.put(None)

    def acquire(self, timeout: float = 300.0) -> tuple[SandboxedChild, SandboxedChild]:
        """A warm (timer child, export child) pair."""
        if self._closed:
            raise RuntimeError("pool closed")
        try:
            pair = self._ready.get(timeout=timeout)
        except queue.Empty:
            raise InfrastructureError("no warm child became ready") from None
        if pair is None:
            self._requests.put(1)
            raise InfrastructureError(
                "warm child failed to start: " + (self._errors[-1] if self._errors else "unknown")
            )
        if not all(c.alive() for c in pair):
            for c in pair:
                c.close()
            self._requests.put(1)
            return self.acquire(timeout)
        return pair

    def evaluate(
        self,
        workload: Any,
        source: str,
        *,
        profile: str,
        hardware: Any = None,
        require_pallas: bool = True,
        baseline: dict[str, Any] | None = None,
        timeouts: dict[str, float] | None = None,
    ) -> EvalRecord:
        """As ``harness.evaluate``, each case in a warm pair of its own."""
        kw = {"hardware": hardware, "require_pallas": require_pallas, "timeouts": timeouts}
        return evaluate_with(self._evaluate_case, workload, source, profile=profile, baseline=baseline, **kw)

    def _evaluate_case(
        self,
        workload: Any,
        source: str,
        *,
        profile: str,
        hardware: Any,
        require_pallas: bool,
        baseline: dict[str, Any] | None,
        timeouts: dict[str, float] | None,
    ) -> EvalRecord:
        child, exporter = self.acquire()
        if self.refill == "immediately" and not self._closed:
            self._requests.put(1)
        try:
            return evaluate_case(
                workload,
                source,
                profile=profile,
                hardware=hardware,
                require_pallas=require_pallas,
                baseline=baseline,
                timeouts=timeouts,
                child=child,
                exporter=exporter,
                closer=self._requests.put,
            )
        finally:
            if self.refill == "after" and not self._closed:
                self._requests.put(1)

    def ready(self) -> int:
        return self._ready.qsize()

    def wait_ready(self, timeout: float = 300.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self._ready.qsize() >= self.size:
                return True
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._closed = True
        self._requests.put(None)
        self._thread.join(timeout=120)  # used children queued before are closed first
        for q in (self._requests, self._ready):
            while True:
                try:
                    item = q.get_nowait()
                except queue.Empty:
                    break
                for c in item if isinstance(item, tuple) else (item,):
                    if isinstance(c, SandboxedChild):
                        c.close()

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
