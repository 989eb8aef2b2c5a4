"""The adversarial corpus through the real pipeline: portal intake -> Dramatiq -> a real worker
-> the isolated harness. Every cheat and probe (tests/jaxbench/harness/candidates and
tests/jaxbench/adversarial/candidates) must get its expected verdict and a complete record
(tests/jaxbench/record_checks.py), leak nothing, leave nothing behind, and leave the worker
healthy for the next candidate."""

import io
import json
import secrets
import subprocess

import pytest
from django.db import transaction

from evaluator.models import Evaluation
from jaxbench import traces as trace_format
from jaxbench.harness.settings import CPU_WALL_SLACK
from submissions import intake
from tests import factories
from tests.conftest import wait_for
from tests.jaxbench.record_checks import check_record

from .corpus import COMPILE_BOMBS, WORKER_SECONDS, expectations, files, source

pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.django_db(transaction=True)]


def corpus():
    return [(p, expectations(p)) for p in files()]


def test_corpus_through_the_pipeline(start_worker, purge_queues):
    items = corpus()
    assert len(items) >= 40
    canary = "canary-" + secrets.token_hex(8)
    factories.hardware()
    factories.workload("12p")
    user, team = factories.member()
    lines = [
        {
            "format": trace_format.FORMAT,
            "method": "adversarial corpus",
            "model": "red team",
            "hardware": "cpu",
            "sampling": "independent",
        }
    ]
    for i, (path, _) in enumerate(items):
        lines.append({"workload": "12p", "index": i, "code": source(path)})
    with transaction.atomic():
        sub = intake.create_trace_submission(team, user, io.BytesIO(trace_format.dumps_lines(lines).encode()))
    worker = start_worker(
        threads=2,
        extra_env={
            "JAXBENCH_CANARY_SECRET": canary,
            "DJANGO_SECRET_KEY": canary + "-key",
            # compile: the production limit; check and timing: below the defaults, so hangs end
            # sooner. All three count the child's CPU seconds here (the cpu target), which the
            # machine's load does not stretch: a busy neighbour cannot turn a verdict into a
            # timeout (settings.cpu_time_limited)
            "JAXBENCH_TIMEOUTS": "check=60,timing=120",
        },
    )

    def finished():
        return Evaluation.objects.filter(candidate__submission=sub, state__in=Evaluation.FINAL_STATES).count() == len(
            items
        )

    try:
        wait_for(finished, timeout=1500, interval=2, message="the whole corpus evaluated")
    except AssertionError:
        raise AssertionError("corpus not finished; worker log:\n" + worker.log())

    rows = {
        e.candidate.index: e for e in Evaluation.objects.filter(candidate__submission=sub).select_related("candidate")
    }
    wrong = []
    for i, (path, expected) in enumerate(items):
        ev = rows[i]
        got = (ev.outcome, ev.record.get("error_category"))
        # each verdict with its phase, for comparing a quiet run with a loaded one (-rP shows it)
        print(f"corpus {path.name}: {got[0]} {got[1]} in {ev.record.get('phase')} ({ev.state})")
        if ev.state != Evaluation.DONE or not any(got[0] == o and (c is None or got[1] == c) for o, c in expected):
            wrong.append(f"{path.name}: got {ev.state}/{got}, expected {expected}: {ev.message[:300]}")
        try:
            check_record(ev.record, path.name)  # complete, in the vocabulary, timings that add up
        except (AssertionError, KeyError) as exc:
            wrong.append(f"{path.name}: its record: {exc!r}")
    assert not wrong, "\n".join(wrong)
    # A compile bomb (a small upload) buys the worker under a minute at the default compile limit,
    # and its verdict is the candidate's, never the harness's. The compile side's limits count the
    # child's CPU time (Run.recv_within_cpu), which the machine's load does not stretch: where the
    # record has it, that is the minute; the wall time may stretch with the load up to the point
    # where the harness calls the machine too busy (CPU_WALL_SLACK), never further.
    for i, (path, _) in enumerate(items):
        if path.name in COMPILE_BOMBS:
            ev = rows[i]
            assert len(source(path).encode()) < 1 << 20
            wall = (ev.finished_at - ev.started_at).total_seconds()
            phases = ev.record.get("phases") or {}
            cpu = [float(v) for k, v in phases.items() if k.endswith("_cpu_s")]
            said = (path.name, wall, phases)
            if cpu:
                assert sum(cpu) <= WORKER_SECONDS, said
                assert wall <= WORKER_SECONDS * CPU_WALL_SLACK, said
            else:
                assert wall <= WORKER_SECONDS, said
            assert ev.outcome in ("rejected", "compile_error", "runtime_error", "timeout"), (path.name, ev.outcome)
    assert {p.name for p, _ in items} >= set(COMPILE_BOMBS)

    # Nothing secret reached any child: no record mentions the canary or the worker's database.
    dump = json.dumps([e.record for e in rows.values()])
    assert canary not in dump
    from tests.conftest import database_url_for_subprocess

    assert database_url_for_subprocess() not in dump
    # The probes saw no service and no database file.
    assert "CONNECTED" not in dump
    assert "53514c69746520666f726d6174" not in dump  # "SQLite format" in hex
    # No daemon outlived its evaluation.
    left = subprocess.run(["pgrep", "-f", "JXB-DAEMON-MARKER"], capture_output=True, text=True).stdout.strip()
    assert not left, f"daemon survived: {left}"
    # The worker is alive and takes the next candidate.
    assert worker.proc.poll() is None, worker.log()
    from evaluator.actors import send_ping
    from evaluator.models import QueuePing

    ping = send_ping("eval.cpu")
    wait_for(lambda: QueuePing.objects.get(pk=ping.pk).answered_at, timeout=60, message="worker still answering")
