"""Every environment variable the portal, the worker, the harness, the client and the tests read,
declared once: its type, its default and what it does. Code reads them through :func:`get`
(never ``os.environ`` directly), so a bad value fails with a message that names the variable,
and the README's table is generated from this list (``python -m jaxbench.environment``;
``tests/test_environment.py`` fails when the two disagree).

It lives in the Django-free harness library because everything can import it: the settings
module, the apps, the sandbox launcher and the standalone client.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any


class ConfigError(RuntimeError):
    """A variable's value cannot be used; the message names it and says what is accepted."""


def _bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean: use 1/0, true/false, yes/no or on/off")


def _number(kind: type) -> Callable[[str, str], Any]:
    def parse(name: str, raw: str):
        try:
            return kind(raw.strip())
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not {'an integer' if kind is int else 'a number'}") from None

    return parse


def _list(name: str, raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _timeouts(name: str, raw: str) -> dict[str, float]:
    out = {}
    for part in _list(name, raw):
        phase, _, value = part.partition("=")
        try:
            out[phase.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"{name}={raw!r}: write phase=seconds pairs, e.g. compile=60,check=120") from None
    return out


def _choice(*choices: str) -> Callable[[str, str], str]:
    def parse(name: str, raw: str) -> str:
        value = raw.strip()
        if value not in choices:
            raise ConfigError(f"{name}={raw!r}: use one of {', '.join(choices)}")
        return value

    return parse


PARSERS: dict[str, Callable[[str, str], Any]] = {
    "string": lambda name, raw: raw,
    "url": lambda name, raw: raw.strip(),
    "path": lambda name, raw: raw,
    "boolean": _bool,
    "integer": _number(int),
    "number": _number(float),
    "list": _list,
    "timeouts": _timeouts,
}


@dataclasses.dataclass(frozen=True)
class Variable:
    name: str
    type: str  # a key of PARSERS, or "choice"
    default: Any
    help: str
    used_by: str  # portal, worker, harness, client, tests
    choices: tuple[str, ...] = ()

    def parse(self, raw: str) -> Any:
        if self.type == "choice":
            return _choice(*self.choices)(self.name, raw)
        return PARSERS[self.type](self.name, raw)


V = Variable
VARIABLES: tuple[Variable, ...] = (
    # -- where the data lives ------------------------------------------------------------------
    V(
        "DATABASE_URL",
        "url",
        None,
        "postgres://user:pass@host:5432/db or sqlite:////abs/path; unset: the "
        "embedded SQLite file under the var directory",
        "portal, worker",
    ),
    V(
        "DRAMATIQ_BROKER_URL",
        "url",
        None,
        "redis://host:6379/0 or amqp://user:pass@host:5672/; unset: the "
        "embedded Redis on a unix socket under the var directory",
        "portal, worker",
    ),
    V(
        "JAXBENCH_VAR_DIR",
        "path",
        None,
        "Data directory (SQLite file, embedded Redis, secret key); default var/ (var/test/ under pytest)",
        "portal, worker, tests",
    ),
    # -- Django ------------------------------------------------------------------------------------
    V(
        "DJANGO_SECRET_KEY",
        "string",
        None,
        "Secret key; unset: a random key generated once under the var directory",
        "portal",
    ),
    V("DJANGO_DEBUG", "boolean", False, "Django debug pages (never in production)", "portal"),
    V("DJANGO_HTTPS", "boolean", False, "Behind HTTPS: secure cookies, HSTS, redirect to https", "portal"),
    V("DJANGO_HSTS_SECONDS", "integer", 31536000, "HSTS max-age when DJANGO_HTTPS is on", "portal"),
    V(
        "DJANGO_ALLOWED_HOSTS",
        "list",
        ["127.0.0.1", "localhost", "testserver", "[::1]"],
        "Host names the portal answers (comma-separated)",
        "portal",
    ),
    V("DJANGO_CSRF_TRUSTED_ORIGINS", "list", [], "Origins trusted for CSRF, e.g. https://jaxbench.example", "portal"),
    V(
        "DJANGO_EMAIL_BACKEND",
        "string",
        "django.core.mail.backends.console.EmailBackend",
        "E-mail backend for password resets",
        "portal",
    ),
    V("DJANGO_DEFAULT_FROM_EMAIL", "string", "jaxbench@localhost", "Sender of password-reset mail", "portal"),
    # -- the portal --------------------------------------------------------------------------------
    V("JAXBENCH_BIND", "string", "127.0.0.1:8000", "Address runportal serves on", "portal"),
    V("JAXBENCH_DEMO", "boolean", True, "runportal loads the demo submissions on first start", "portal"),
    V(
        "JAXBENCH_LOG_LEVEL",
        "choice",
        "INFO",
        "Log level of the portal and the worker",
        "portal, worker",
        ("DEBUG", "INFO", "WARNING", "ERROR"),
    ),
    V(
        "JAXBENCH_REQUIRE_PALLAS",
        "boolean",
        True,
        "Reject candidates whose work is done outside Pallas kernels (the Pallas-share rule)",
        "portal, worker",
    ),
    V("JAXBENCH_TOKEN_RATE", "string", "600/min", "API rate limit per token", "portal"),
    V("JAXBENCH_ANON_RATE", "string", "300/min", "API rate limit per anonymous address", "portal"),
    V("JAXBENCH_UPLOAD_RATE", "string", "120/hour", "Uploads (kernels or traces) per user", "portal"),
    # -- the worker --------------------------------------------------------------------------------
    V(
        "JAXBENCH_LEASE_SECONDS",
        "integer",
        900,
        "A running evaluation's lease; a worker that stops renewing it loses the row to the reconciler",
        "worker",
    ),
    V("JAXBENCH_MAX_ATTEMPTS", "integer", 5, "Infrastructure failures before an evaluation is marked failed", "worker"),
    V("JAXBENCH_EVALUATION_TIME_LIMIT_S", "integer", 3600, "Dramatiq time limit of one evaluation", "worker"),
    V(
        "JAXBENCH_TIMEOUTS",
        "timeouts",
        None,
        "Per-phase harness limits, e.g. compile=60,check=120,timing=300 (seconds); unset: the harness's defaults",
        "worker",
    ),
    V(
        "JAXBENCH_RECONCILE_INTERVAL_SECONDS",
        "number",
        30.0,
        "How often a worker re-sends lost or orphaned evaluations",
        "worker",
    ),
    V(
        "JAXBENCH_RECONCILE_STALE_SECONDS",
        "number",
        120.0,
        "A queued row whose message is gone is re-sent only if it was last sent longer ago than this",
        "worker",
    ),
    V(
        "JAXBENCH_BROKER_HEARTBEAT_SECONDS",
        "number",
        60.0,
        "Redis broker: a consumer silent this long counts as dead, and the reconciler re-sends what it held",
        "worker",
    ),
    V(
        "JAXBENCH_WORKER_HARDWARE",
        "string",
        "cpu",
        "The worker's hardware target (set at boot from "
        "jax.devices() unless JAXBENCH_WORKER_QUEUES overrides the queues)",
        "worker",
    ),
    V(
        "JAXBENCH_WORKER_QUEUES",
        "list",
        [],
        "Queues to consume instead of the detected hardware's (comma-separated; each evaluation queue with its background. twin)",
        "worker",
    ),
    # -- the harness -------------------------------------------------------------------------------
    V("JAXBENCH_PLATFORM", "choice", None, "Force the harness's JAX platform", "harness", ("cpu", "tpu", "gpu")),
    V(
        "JAXBENCH_TIMING",
        "choice",
        "profiler",
        "wall: time with the wall clock instead of profiler traces (debugging only)",
        "harness",
        ("profiler", "wall"),
    ),
    V(
        "JAXBENCH_CPU_CORES",
        "string",
        None,
        "Cores a CPU child is pinned to (\"3\" or \"2,3\"; all/none: "
        "unpinned); unset: the least busy core outside the timing cores",
        "harness",
    ),
    V(
        "JAXBENCH_TIMING_CORES",
        "string",
        None,
        "Cores dedicated to CPU timing phases (\"3\", \"2,3\", last or none); the web server, the worker "
        "and every other child keep off them; unset: the last core on hosts of 4 or more cores, none below",
        "harness, worker",
    ),
    V(
        "JAXBENCH_MACHINE_CORES",
        "string",
        None,
        "Set by the portal itself in a process it keeps off the timing cores: the cores it had before, "
        "for its children (not for operators)",
        "harness",
    ),
    V(
        "JAXBENCH_SANDBOX_MODE",
        "choice",
        None,
        "Force the sandbox mode instead of the strongest one that works here",
        "harness",
        ("bwrap-unprivileged", "bwrap", "none-unprivileged", "none"),
    ),
    V(
        "JAXBENCH_DEVICE_LOCK_DIR",
        "path",
        None,
        "Directory of the per-device locks (one process holds a TPU chip or GPU at a time, across "
        "the host's workers); unset: jaxbench-device-locks under the system's temporary directory",
        "harness, worker",
    ),
    V(
        "JAXBENCH_CACHE_DIR",
        "path",
        None,
        "The trusted side's caches on this host: the XLA baseline timed alone, reused by the next "
        "`jaxbench evaluate` (under baselines/), and compiled XLA programs (under xla/); unset: "
        "$XDG_CACHE_HOME/jaxbench, else ~/.cache/jaxbench",
        "harness",
    ),
    V(
        "JAXBENCH_XLA_CACHE_MB",
        "number",
        512.0,
        "Size of the trusted side's persistent XLA compilation cache (inputs, references, exact answers "
        "compiled once per host, not per process; least recently used first out); 0: off. Candidates' "
        "children never use one",
        "harness",
    ),
    V(
        "JAXBENCH_BASELINE_CACHE_DAYS",
        "number",
        7.0,
        "How many days a baseline timed alone is reused from this host's disk cache, by the command "
        "line and by a worker whose database has none; 0: never",
        "harness",
    ),
    V(
        "JAXBENCH_SIMULATE_EXCLUSIVE_DEVICE",
        "boolean",
        False,
        "Test mode: cpu behaves as an exclusive device (the device lock is required and a fake device "
        "node fails loudly when two children hold it)",
        "harness, tests",
    ),
    V(
        "JAXBENCH_EXTRA_WORKLOADS",
        "list",
        [],
        "Workload modules defined outside jaxbench/workloads to register too (comma-separated dotted "
        "names; the tests' level-2 workload). Every process of a run (web, worker) must see the same value",
        "portal, worker, harness, tests",
    ),
    # -- the client --------------------------------------------------------------------------------
    V("JAXBENCH_URL", "url", None, "The portal's address, for `python -m jaxbench.client`", "client"),
    V("JAXBENCH_TOKEN", "string", None, "An API token (account page), for the client", "client"),
    V("JAXBENCH_HARDWARE", "string", None, "Default hardware target of the client's uploads", "client"),
    # -- the tests and benchmarks ------------------------------------------------------------------
    V(
        "JAXBENCH_VARIANT",
        "choice",
        "embedded",
        "Which configuration the integration tests expect",
        "tests",
        ("embedded", "postgres-redis", "postgres-rabbitmq"),
    ),
    V(
        "JAXBENCH_PUBLIC_SUITE",
        "path",
        None,
        "A checkout of the public JAXBench/ folder: runs its 50 baseline.py files through the harness",
        "tests",
    ),
    V(
        "JAXBENCH_PUBLIC_SUITE_MIRROR",
        "path",
        None,
        "A git copy of the public repository (bare or a clone): checks each workload's recorded upstream commit",
        "tests",
    ),
    V("JAXBENCH_FUZZ_EXAMPLES", "integer", 12, "Hypothesis examples per API fuzz test", "tests"),
    V("JAXBENCH_FUZZ_STATS", "boolean", False, "Print the API fuzzer's statistics", "tests"),
    V(
        "JAXBENCH_CANARY_SECRET",
        "string",
        None,
        "A canary the isolation tests plant in the worker's environment; no child may see it",
        "tests",
    ),
    V("JAXBENCH_FAKE_SECRET", "string", None, "A canary the sandbox tests plant; no child may see it", "tests"),
)
BY_NAME = {v.name: v for v in VARIABLES}


def get(name: str, environ: dict | None = None) -> Any:
    """The parsed value of ``name`` (its default when unset or empty); ConfigError when bad."""
    var = BY_NAME[name]  # a KeyError here is a variable someone forgot to declare
    raw = (os.environ if environ is None else environ).get(name)
    if raw is None or raw.strip() == "":
        return var.default
    return var.parse(raw)


def is_set(name: str) -> bool:
    BY_NAME[name]
    return bool((os.environ.get(name) or "").strip())


def markdown_table() -> str:
    """The README's table of variables."""

    def default(v: Variable) -> str:
        if v.default in (None, [], ""):
            return ""
        if isinstance(v.default, bool):
            return "1" if v.default else "0"
        if isinstance(v.default, list):
            return ",".join(v.default)
        return str(v.default)

    rows = ["| variable | type | default | used by | what it does |", "|---|---|---|---|---|"]
    for v in VARIABLES:
        kind = " / ".join(v.choices) if v.type == "choice" else v.type
        rows.append(
            f"| `{v.name}` | {kind} | {('`' + default(v) + '`') if default(v) else ''} | {v.used_by} | {v.help} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
